// The driver of a node code context: the program a context's node interpreter runs (the twin of
// ctxdriver.py; see that file for the protocol). The daemon copies this file into the context's
// directory and the image's own `node` runs it, with the socket's path as its only argument.
//
// Frames are a 4-byte big-endian length, then that many bytes of JSON, on a Unix socket. The
// daemon connects (again after a restart: a new connection replaces the old one) and gets
// `{"op": "hello", "pid", "busy": ID|null, "last": DONE|null}` first. Node cannot receive file
// descriptors on a socket, so a `run` frame names the execution's stdout and stderr spool files
// by path instead (hard links the daemon made in the channel directory): the driver opens them,
// and what the cell writes to process.stdout, process.stderr and the console goes there. Reply:
// `{"op": "done", "id", "result": TEXT|null, "error": null|{"type", "message", "traceback"},
// "interrupted": bool, "usage": {"cpuUserMs", "cpuSystemMs", "peakMemoryBytes"}}` (see `Usage`). `{"op": "interrupt", "id"}` sends SIGINT to the interpreter if that cell
// is the one running: node's `vm` watchdog (breakOnSigint) ends a synchronous cell, and a cell
// awaiting a promise stops waiting for it.
//
// The socket is served by a worker thread, since a cell blocks the main thread (and its event
// loop) for as long as it runs synchronously. A cell is a `vm.Script` run in one context kept for
// the interpreter's life (the REPL's: `repl.REPLServer` with a context of its own, so `require`
// and the built-in modules are there as in node's REPL): top-level `var` and function
// declarations persist on its global object, and `let`, `const` and `class` in its script scope,
// as between REPL lines (so, as there, declaring one again with `let` or `const` is a
// SyntaxError). A cell with a top-level `await` goes to the REPL's own evaluator, which rewrites
// it into an async function (hoisting its declarations) and waits for it. The completion value
// of the cell is its result (util.inspect, as the REPL shows it; `undefined` is no result).
'use strict';

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const util = require('node:util');
const vm = require('node:vm');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

const MAX_FRAME = 256 * 1024 * 1024;
// The longest `result` text: a longer one is cut (with a note).
const MAX_RESULT_CHARS = 256 * 1024;
// Shared between the threads: [0] the sequence number of the running cell (0: none; negated once
// an interrupt was sent to it), [1] the last sequence number an interrupt was asked for.
const RUNNING = 0;
const INTERRUPTED = 1;

// -- the connection (the worker thread) -------------------------------------------------------

function serve({ socketPath, state }) {
  const shared = new Int32Array(state);
  let link = null;
  let busy = null; // {id, seq} of the cell forwarded and not yet answered
  let last = null;
  let seq = 0;

  function send(socket, message) {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length, 0);
    socket.write(Buffer.concat([header, body]));
  }

  function onFrame(socket, message) {
    if (message.op === 'run') {
      seq += 1;
      busy = { id: String(message.id), seq };
      parentPort.postMessage({ op: 'run', seq, id: busy.id, code: String(message.code),
                               stdout: message.stdout, stderr: message.stderr });
    } else if (message.op === 'interrupt' && busy !== null && busy.id === message.id) {
      Atomics.store(shared, INTERRUPTED, busy.seq);
      if (Atomics.compareExchange(shared, RUNNING, busy.seq, -busy.seq) === busy.seq) {
        process.kill(process.pid, 'SIGINT');
      }
    }
  }

  parentPort.on('message', (reply) => {
    last = reply;
    busy = null;
    if (link !== null) {
      try {
        send(link, reply);
      } catch {
        // the daemon is gone: the next one reads it from `hello`
      }
    }
  });

  const server = net.createServer((socket) => {
    if (link !== null) link.destroy();
    link = socket;
    let buffer = Buffer.alloc(0);
    socket.on('data', (data) => {
      buffer = Buffer.concat([buffer, data]);
      while (buffer.length >= 4) {
        const size = buffer.readUInt32BE(0);
        if (size > MAX_FRAME) {
          socket.destroy();
          return;
        }
        if (buffer.length < 4 + size) break;
        const body = buffer.subarray(4, 4 + size);
        buffer = buffer.subarray(4 + size);
        let message;
        try {
          message = JSON.parse(body.toString('utf8'));
        } catch {
          socket.destroy();
          return;
        }
        onFrame(socket, message);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (link === socket) link = null;
    });
    send(socket, { op: 'hello', pid: process.pid, busy: busy && busy.id, last });
  });
  // A socket's path is at most 107 bytes: bound through its directory's fd, any path fits.
  const directory = fs.openSync(path.dirname(socketPath), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  const short = `/proc/self/fd/${directory}/${path.basename(socketPath)}`;
  for (const stale of [socketPath, socketPath + '.new']) {
    try { fs.unlinkSync(stale); } catch {}
  }
  server.listen(short + '.new', () => {
    fs.chmodSync(socketPath + '.new', 0o600);
    // Renamed into place once listening: a connect to the path never finds it half made.
    fs.renameSync(socketPath + '.new', socketPath);
    fs.closeSync(directory);
  });
}

// -- the cells (the main thread) --------------------------------------------------------------

class Output {
  // process.stdout and process.stderr write to the running cell's spool files (else to the
  // interpreter's own fds 1 and 2, the context's log).
  constructor() {
    this.fds = [1, 2];
    for (const [index, stream] of [[0, process.stdout], [1, process.stderr]]) {
      stream.write = (chunk, encoding, callback) => {
        if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
        const data = typeof chunk === 'string' ? Buffer.from(chunk, encoding || 'utf8') : Buffer.from(chunk);
        try {
          for (let done = 0; done < data.length;) done += fs.writeSync(this.fds[index], data, done);
        } catch (err) {
          if (callback) process.nextTick(callback, err);
          return true;
        }
        if (callback) process.nextTick(callback);
        return true;
      };
    }
  }

  open(paths) {
    const fds = paths.map((p) => fs.openSync(p, 'a', 0o600));
    for (const p of paths) {
      try { fs.unlinkSync(p); } catch {}
    }
    this.fds = fds;
  }

  close() {
    for (const fd of this.fds) if (fd > 2) fs.closeSync(fd);
    this.fds = [1, 2];
  }
}

class Driver {
  constructor(state) {
    const repl = require('node:repl');
    const { PassThrough, Writable } = require('node:stream');
    this.shared = new Int32Array(state);
    this.output = new Output();
    this.cells = 0;
    this.pending = null; // the callback of the cell being evaluated
    // What the REPL itself would print (an error thrown later by a timer of a cell) goes to
    // stderr: the running cell's, else the context's log.
    const said = new Writable({ write: (chunk, _enc, done) => { process.stderr.write(chunk); done(); } });
    this.server = repl.start({
      input: new PassThrough(), output: said, terminal: false, prompt: '',
      useGlobal: false, ignoreUndefined: true,
    });
    // The REPL gives its context a console of its own, on its output: the cell's is the process's.
    this.server.context.console = console;
    // Its first use warns that it is experimental: into the context's log now, not into a cell.
    if (LOADER) compile("import('node:path')", '<start>').runInContext(vm.createContext({}));
    // An error thrown by a cell reaches the REPL's domain, not the evaluator's callback.
    this.server._domain.removeAllListeners('error');
    this.server._domain.on('error', (err) => this.thrown(err));
    // One thrown later by a callback (a timer's) is not the running cell's: it is printed.
    process.on('uncaughtException', (err) => say(err));
    process.on('SIGINT', () => this.interrupt());
  }

  thrown(err) {
    if (this.pending !== null) {
      this.pending(err);
    } else {
      say(err);
    }
  }

  async run(job) {
    this.cells += 1;
    try {
      this.output.open([job.stdout, job.stderr]);
    } catch (err) {
      return done(job.id, { error: errorOf(err) });
    }
    process.env.WORKBENCH_EXECUTION_ID = job.id;
    Atomics.store(this.shared, RUNNING, job.seq);
    const usage = new Usage();
    try {
      const reply = Atomics.load(this.shared, INTERRUPTED) === job.seq
        ? done(job.id, { error: errorOf(new Error('interrupted before it started')), interrupted: true })
        : await this.evaluate(job);
      reply.usage = usage.taken();
      return reply;
    } finally {
      Atomics.store(this.shared, RUNNING, 0);
      this.output.close();
    }
  }

  evaluate(job) {
    // A script of its own first, run with node's SIGINT watchdog (the REPL's way to interrupt
    // a synchronous cell); only one with a top-level `await`, which no script can hold, goes to
    // the REPL's evaluator, which rewrites it into an async function and waits for it.
    const filename = `<cell ${this.cells}>`;
    let script;
    try {
      script = compile(job.code, filename);
    } catch (err) {
      if (!(err instanceof SyntaxError) || !job.code.includes('await')) return this.failed(job.id, err);
      return this.awaited(job, filename);
    }
    let value;
    try {
      value = script.runInContext(this.server.context, { breakOnSigint: true, displayErrors: false });
    } catch (err) {
      return this.failed(job.id, err);
    }
    return this.answered(job.id, value);
  }

  awaited(job, filename) {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (thrown, err, value) => {
        if (settled) return;
        settled = true;
        this.pending = null;
        resolve(thrown ? this.failed(job.id, err) : this.answered(job.id, value));
      };
      this.pending = (err) => finish(true, err);
      try {
        this.server.eval(job.code, this.server.context, filename, (err, value) => finish(Boolean(err), err, value));
      } catch (err) {
        finish(true, err);
      }
    });
  }

  interrupt() {
    // A SIGINT while no synchronous cell runs (the watchdog takes those): a cell awaiting a
    // promise stops waiting for it; else nothing (a late interrupt never ends the driver).
    if (this.pending !== null) {
      const err = new Error('Script execution was interrupted by `SIGINT`');
      err.code = 'ERR_SCRIPT_EXECUTION_INTERRUPTED';
      this.pending(err);
    }
  }

  // The reply to a cell that threw `err` (any value: `throw 0` too). Whatever the value's own
  // code (getters, a proxy's traps, a custom inspection) throws, the cell gets its answer.
  failed(id, err) {
    const error = safely(() => (err.constructor.name === 'Recoverable' && err.err ? err.err : err), err);
    const interrupted = safely(() => isObject(error) && error.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED', false);
    this.server.lastError = error;
    return done(id, { error: errorOf(error), interrupted });
  }

  answered(id, value) {
    if (value === undefined) return done(id, {});
    this.server.last = value;
    let text;
    try {
      text = String(util.inspect(value, { ...util.inspect.defaultOptions, showProxy: true }));
    } catch (exc) {
      return this.failed(id, exc);
    }
    if (text.length > MAX_RESULT_CHARS) {
      text = `${text.slice(0, MAX_RESULT_CHARS)}... (${text.length - MAX_RESULT_CHARS} more characters)`;
    }
    return done(id, { result: text });
  }
}

// What a cell used: the interpreter's CPU time (all its threads; node cannot tell its children's)
// while the cell ran, and the most resident memory it held meanwhile (its high-water mark, reset
// as the cell starts where Linux can, else only a lifetime mark that grew tells). In `done`.
class Usage {
  constructor() {
    this.reset = safely(() => { fs.writeFileSync('/proc/self/clear_refs', '5'); return true; }, false);
    this.start = process.resourceUsage();
  }

  taken() {
    const now = process.resourceUsage();
    let peak = this.reset ? highWater() : null;
    if (peak === null && now.maxRSS > this.start.maxRSS) peak = now.maxRSS * 1024;
    return {
      cpuUserMs: Math.max(0, Math.round((now.userCPUTime - this.start.userCPUTime) / 1000)),
      cpuSystemMs: Math.max(0, Math.round((now.systemCPUTime - this.start.systemCPUTime) / 1000)),
      peakMemoryBytes: peak,
    };
  }
}

function highWater() {
  const status = safely(() => fs.readFileSync('/proc/self/status', 'utf8'), '');
  const found = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  return found ? Number(found[1]) * 1024 : null;
}

// `import()` in a cell loads as the main context does, where this node can (20.8 and later).
const LOADER = vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;

function compile(code, filename) {
  const options = LOADER ? { filename, importModuleDynamically: LOADER } : { filename };
  // As the REPL does: a cell that starts with `{` is first taken as an object literal.
  if (/^\s*\{/.test(code) && !/;\s*$/.test(code)) {
    try {
      return new vm.Script(`(${code}\n)`, options);
    } catch {
      // a block after all
    }
  }
  return new vm.Script(code, options);
}

function say(err) {
  process.stderr.write(`Uncaught ${describe(err).traceback}\n`);
}

function done(id, { result = null, error = null, interrupted = false }) {
  return { op: 'done', id, result, error, interrupted };
}

// `make()`, or `fallback` where it throws (a thrown value's getters and traps run the cell's code).
function safely(make, fallback) {
  try {
    return make();
  } catch {
    return fallback;
  }
}

function isObject(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function');
}

function inspected(value) {
  return safely(() => String(util.inspect(value)), '<util.inspect() failed>');
}

function describe(err) {
  const stack = safely(() => (isObject(err) ? err.stack : undefined), undefined);
  if (typeof stack === 'string') {
    // The REPL's and the driver's own frames are not the user's: the trace ends at the cell.
    const lines = stack.split('\n');
    const ours = lines.findIndex((line) => /^\s+at /.test(line) && (/\(node:(vm|repl|domain):/.test(line) || line.includes(__filename)));
    return { traceback: (ours === -1 ? lines : lines.slice(0, ours)).join('\n') };
  }
  return { traceback: inspected(err) };
}

function errorOf(err) {
  const { traceback } = describe(err);
  const named = safely(() => (isObject(err) ? err.name : undefined), undefined);
  if (safely(() => err instanceof Error || (typeof named === 'string' && 'message' in err), false)) {
    const name = typeof named === 'string' && named ? named : 'Error';
    const message = safely(() => String(err.message), '<String(message) failed>');
    return { type: name, message: message ? `${name}: ${message}` : name, traceback };
  }
  return { type: 'Uncaught', message: `Uncaught ${inspected(err)}`, traceback };
}

function main() {
  const socketPath = process.argv[2];
  const state = new SharedArrayBuffer(8);
  const driver = new Driver(state);
  const worker = new Worker(__filename, { workerData: { socketPath, state } });
  const jobs = [];
  let running = false;
  async function next() {
    if (running) return;
    running = true;
    while (jobs.length > 0) {
      const job = jobs.shift();
      let reply;
      try {
        reply = await driver.run(job);
      } catch (err) {
        reply = done(job.id, { error: errorOf(err) });
      }
      worker.postMessage(reply);
    }
    running = false;
  }
  worker.on('message', (job) => {
    jobs.push(job);
    next();
  });
  worker.on('error', (err) => {
    process.stderr.write(`the driver's channel failed: ${err && err.stack}\n`);
    process.exit(70);
  });
}

if (isMainThread) {
  main();
} else {
  serve(workerData);
}
