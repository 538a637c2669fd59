// Starts the local cluster once per test run (filled in by the test-bed work).
export default function setup(): void {}
