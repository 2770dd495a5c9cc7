// SPDX-License-Identifier: Apache-2.0
'use strict';
/*
 * An xDS client built on @grpc/grpc-js-xds.
 *
 * Opens a channel to an xds:/// target, so the channel's resolver and load
 * balancing come from the xDS management server named in the bootstrap
 * file, then calls /xdsd.test.Echo/Who and reports every result as one
 * JSON line on stdout, in the same form as tests/interop/client.py:
 *
 *   {"event":"start","client":"node grpc-js-xds 1.14.1 (grpc-js 1.14.7)",...}
 *   {"seq":1,"ok":true,"who":"A","ms":3.1}
 *   {"seq":2,"ok":false,"code":"UNAVAILABLE","details":"...","ms":15003.2}
 *   {"event":"done","rpcs":2,"failed":1}
 *
 * It loops (one RPC, then --interval-ms of rest) until stdin reaches end
 * of file or SIGTERM arrives (an RPC then in flight is cancelled and not
 * reported), or makes --count RPCs and exits. The first
 * RPC may wait --first-deadline seconds (the xDS resources have to
 * arrive); later ones --deadline seconds. Exit status 0 once stopped as
 * asked, even when RPCs failed: the caller judges the results.
 *
 * With --xds-ca, --xds-cert and --xds-key (PEM files) the xDS client
 * speaks mutual TLS to its server with that client certificate; see
 * useMtlsForXds.
 *
 * The modules come from the build tree (npm ci of this directory):
 *
 *   NODE_PATH=build/tests/interop/node/node_modules \
 *   GRPC_TRACE=xds_client GRPC_VERBOSITY=DEBUG \
 *     node client.js --bootstrap bootstrap.json --count 1 xds:///interop.xdsd.test
 */
const path = require('path');

const METHOD = '/xdsd.test.Echo/Who';

function usage(msg) {
  process.stderr.write(`client.js: ${msg}\n` +
    'usage: client.js [--bootstrap FILE] [--count N] [--interval-ms MS]\n' +
    '                 [--first-deadline S] [--deadline S]\n' +
    '                 [--xds-ca FILE --xds-cert FILE --xds-key FILE] TARGET\n');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { count: 0, intervalMs: 20, firstDeadline: 20, deadline: 5 };
  const numeric = {
    '--count': 'count', '--interval-ms': 'intervalMs',
    '--first-deadline': 'firstDeadline', '--deadline': 'deadline',
  };
  const files = {
    '--bootstrap': 'bootstrap', '--xds-ca': 'xdsCa', '--xds-cert': 'xdsCert',
    '--xds-key': 'xdsKey',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a in files) {
      if (i + 1 >= argv.length) usage(`${a} needs a file`);
      args[files[a]] = argv[++i];
    } else if (a in numeric) {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < 0) usage(`${a} needs a number`);
      args[numeric[a]] = v;
    } else if (a.startsWith('-')) {
      usage(`unknown option ${a}`);
    } else if (args.target === undefined) {
      args.target = a;
    } else {
      usage(`unexpected argument ${a}`);
    }
  }
  if (args.target === undefined) usage('no target');
  const tls = [args.xdsCa, args.xdsCert, args.xdsKey].filter((f) => f !== undefined);
  if (tls.length !== 0 && tls.length !== 3) usage('--xds-ca, --xds-cert and --xds-key go together');
  return args;
}

function emit(obj) {
  // Writes to a pipe or file are synchronous in Node on Linux.
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function versionOf(pkg) {
  try {
    return require(`${pkg}/package.json`).version;
  } catch (e) {
    return '?';
  }
}

/*
 * grpc-js-xds 1.14 accepts only "google_default" and "insecure" as the
 * channel_creds of its xDS server (SUPPORTED_CHANNEL_CREDS_TYPES in its
 * xds-bootstrap.js: the "tls" of `gRFC A65` came later), and makes the insecure
 * ones with grpc-js's ChannelCredentials.createInsecure(). Here that
 * function returns grpc-js's own SSL credentials with the client
 * certificate instead: the xDS client then speaks mutual TLS (server
 * checked against the CA) to the server its bootstrap names. Call it
 * after making the backends' credentials, which stay insecure, and
 * before the first xds channel.
 */
function useMtlsForXds(grpc, args) {
  const fs = require('fs');
  const creds = grpc.ChannelCredentials.createSsl(fs.readFileSync(args.xdsCa),
    fs.readFileSync(args.xdsKey), fs.readFileSync(args.xdsCert));
  grpc.ChannelCredentials.createInsecure = () => creds;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  // grpc-js-xds reads the bootstrap when the first xds channel is made.
  if (args.bootstrap) process.env.GRPC_XDS_BOOTSTRAP = path.resolve(args.bootstrap);
  if (!process.env.GRPC_XDS_BOOTSTRAP && !process.env.GRPC_XDS_BOOTSTRAP_CONFIG) {
    usage('no bootstrap: pass --bootstrap or set GRPC_XDS_BOOTSTRAP');
  }

  const grpc = require('@grpc/grpc-js');
  const backendCreds = grpc.credentials.createInsecure();
  if (args.xdsCa !== undefined) useMtlsForXds(grpc, args);
  require('@grpc/grpc-js-xds').register();

  let stopping = false;
  let timer = null;
  let inflight = null;
  let seq = 0;
  let failed = 0;
  const client = new grpc.Client(args.target, backendCreds);

  function finish() {
    client.close();
    emit({ event: 'done', rpcs: seq, failed });
    process.exit(0);
  }

  function stop() {
    if (stopping) return;
    stopping = true;
    // The run is over: an RPC in flight is cancelled and not reported.
    if (timer !== null) clearTimeout(timer);
    if (inflight !== null) {
      inflight.cancel();
      seq -= 1;
    }
    finish();
  }

  function next() {
    timer = null;
    if (stopping || (args.count > 0 && seq >= args.count)) {
      finish();
      return;
    }
    seq += 1;
    const n = seq;
    const seconds = n === 1 ? args.firstDeadline : args.deadline;
    const deadline = new Date(Date.now() + seconds * 1000);
    const t0 = process.hrtime.bigint();
    inflight = client.makeUnaryRequest(METHOD, (b) => b, (b) => b, Buffer.alloc(0),
      { deadline }, (err, reply) => {
        inflight = null;
        if (stopping) return;
        const ms = Math.round(Number(process.hrtime.bigint() - t0) / 1e5) / 10;
        if (err) {
          failed += 1;
          emit({ seq: n, ok: false, code: grpc.status[err.code] || String(err.code),
                 details: err.details || err.message || '', ms });
        } else {
          emit({ seq: n, ok: true, who: reply.toString('utf8'), ms });
        }
        timer = setTimeout(next, args.intervalMs);
      });
  }

  process.on('SIGTERM', stop);
  if (args.count === 0) {
    process.stdin.on('end', stop);
    process.stdin.on('error', stop);
    process.stdin.resume();
  }
  emit({
    event: 'start',
    client: `node grpc-js-xds ${versionOf('@grpc/grpc-js-xds')} ` +
      `(grpc-js ${versionOf('@grpc/grpc-js')}, node ${process.version})`,
    target: args.target,
    xds_creds: args.xdsCa !== undefined ? `mtls (${path.basename(args.xdsCert)})` : 'insecure',
  });
  next();
}

main();
