/** The generateName bases of the objects snapshot data movement creates. */

/** The longest generateName base the API server keeps whole (it cuts longer ones to this length). */
export const MAX_GENERATE_NAME_BASE = 58;

/** `<name>-`, the name cut so that the API server keeps it whole and the generated name keeps its random suffix. */
export function generateNameFor(name: string): string {
  return `${name.slice(0, MAX_GENERATE_NAME_BASE - 1)}-`;
}
