// Runs a wasm32-wasip1 program under Node's WASI (node:wasi, preview 1): the test binaries and
// the smoke app of `bash web/wasm.sh`.
//
//   node web/wasm-run.mjs [--dir HOST[=GUEST]]... [--env NAME=VALUE]... PROGRAM.wasm [ARGS...]
//
// Every --dir is preopened (GUEST defaults to HOST: absolute paths compiled into the program,
// such as env!("CARGO_MANIFEST_DIR"), then name the same files). The environment is only what
// --env gives. The exit status is the program's (a trap, e.g. a panic under panic=abort, is 134).
import { WASI } from 'node:wasi';
import { readFile } from 'node:fs/promises';

const argv = process.argv.slice(2);
const preopens = {};
const env = {};
while (argv.length > 0 && argv[0].startsWith('--')) {
  const flag = argv.shift();
  const value = argv.shift();
  if (value === undefined) usage(`${flag} needs a value`);
  if (flag === '--dir') {
    const [host, guest = host] = value.split('=');
    preopens[guest] = host;
  } else if (flag === '--env') {
    const eq = value.indexOf('=');
    if (eq < 1) usage(`--env ${value}: expected NAME=VALUE`);
    env[value.slice(0, eq)] = value.slice(eq + 1);
  } else {
    usage(`unknown option ${flag}`);
  }
}
if (argv.length === 0) usage('no program given');

function usage(message) {
  console.error(`wasm-run: ${message}`);
  console.error('usage: node web/wasm-run.mjs [--dir HOST[=GUEST]]... [--env NAME=VALUE]... PROGRAM.wasm [ARGS...]');
  process.exit(2);
}

const [program] = argv;
const wasi = new WASI({ version: 'preview1', args: argv, env, preopens, returnOnExit: true });
let status;
try {
  const module = await WebAssembly.compile(await readFile(program));
  const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
  status = wasi.start(instance);
} catch (e) {
  console.error(`wasm-run: ${program}: ${e instanceof WebAssembly.RuntimeError ? 'trap: ' : ''}${e.message}`);
  status = 134;
}
process.exit(status);
