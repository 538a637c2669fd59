// Placeholder until the test bed lands: `setup` installs the local cluster's toolchain.
const [cmd] = process.argv.slice(2);
if (cmd === 'setup') process.exit(0);
console.error(`unknown command ${cmd ?? ''}`);
process.exit(2);
