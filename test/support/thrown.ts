/**
 * The error a test expects a call to throw, of one class: any other error is thrown on, so it fails the test with
 * its own message and stack.
 */

type ErrorClass<E extends Error> = abstract new (...args: never[]) => E;

/** The `type` error `fn` throws, or undefined when it throws nothing. */
export function thrownBy<E extends Error>(type: ErrorClass<E>, fn: () => unknown): E | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  return undefined;
}

/** The `type` error `fn` throws; throwing nothing fails the test. */
export function expectThrown<E extends Error>(type: ErrorClass<E>, fn: () => unknown): E {
  const err = thrownBy(type, fn);
  if (!err) throw new Error(`expected a ${type.name}, nothing was thrown`);
  return err;
}
