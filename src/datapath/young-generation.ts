/**
 * Keeps V8's young generation small while a backup runs, so memory stays flat however many files a volume holds.
 *
 * V8 doubles the young generation (its two semi-spaces) whenever, over time, the bytes that survived scavenges exceed
 * its size. A backup of a million small files allocates a few short-lived objects per file, so the bytes that survive
 * add up over a long run and the young generation grows step by step (16 → 32 → 64 → 128 MB of committed heap), which shows
 * as RSS rising with the file count. Nothing in a backup needs a large young generation: what survives a scavenge is
 * a directory's listing at most. `--max-semi-space-size` would bound it, but only on the command line, before the
 * heap exists. What V8 reads at every growth is `--semi-space-growth-factor`, so this sets it to 1 (no growth) once
 * the young generation has reached the bound, and back to V8's default (2) when the last backup in the process ends.
 * The flag is process-wide (every isolate of the process shares V8's flags), hence the count of active holders.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * Young generation size from which growth stops: Node 24 starts with 16 MiB (two 8 MiB semi-spaces) and grows it up to
 * 128 MiB. At 16 MiB a backup of 1M tiny files kept its RSS flat (+1 % from 250k to 1M files) and took no more CPU.
 */
const MAX_NEW_SPACE_BYTES = 16 << 20;
/** V8's default growth factor (flag-definitions.h), restored when no backup holds the cap. */
const DEFAULT_GROWTH_FACTOR = 2;

let holders = 0;
let capped = false;

function setGrowth(noGrowth: boolean): void {
  if (capped === noGrowth) return;
  capped = noGrowth;
  setFlagsFromString(`--semi-space-growth-factor=${noGrowth ? 1 : DEFAULT_GROWTH_FACTOR}`);
}

function newSpaceBytes(): number {
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space') return space.space_size;
  return 0;
}

export interface YoungGenerationCap {
  /** Looks at the young generation's size and stops its growth once it reached the bound (cheap: a few µs). */
  check(): void;
  /** Ends this holder's cap; growth is allowed again when no other holder remains. */
  release(): void;
}

/** Starts bounding the young generation of this process; call `check()` now and then (every ~1,000 files). */
export function capYoungGeneration(): YoungGenerationCap {
  holders++;
  let released = false;
  const cap: YoungGenerationCap = {
    check() {
      if (released) return;
      // Below the bound growth stays allowed (a too small young generation promotes more garbage to the old one);
      // V8 may also shrink it on its own, after which it may grow back up to the bound.
      setGrowth(newSpaceBytes() >= MAX_NEW_SPACE_BYTES);
    },
    release() {
      if (released) return;
      released = true;
      holders--;
      if (holders === 0) setGrowth(false);
    },
  };
  cap.check();
  return cap;
}
