// SPDX-License-Identifier: Apache-2.0
package xdsd.interop;

import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.ClientCalls;
import io.grpc.xds.XdsCredentialsProvider;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.ConsoleHandler;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * An xDS client built on grpc-java: the interop tests' Java client
 * (tests/interop/README.md). It speaks as tests/interop/client.py does:
 * opens a channel to an xds:/// target (grpc-xds registers the
 * resolver; the bootstrap file comes from GRPC_XDS_BOOTSTRAP, or
 * --bootstrap, which sets the system property grpc-java reads beside
 * it), calls /xdsd.test.Echo/Who and writes one JSON line per result
 * on stdout:
 *
 * <pre>
 *   {"event": "start", "client": "java grpc 1.85.1", "target": "..."}
 *   {"seq": 1, "ok": true, "who": "A", "ms": 3.1}
 *   {"seq": 2, "ok": false, "code": "UNAVAILABLE", "details": "...", "ms": 5003.2}
 *   {"event": "done", "rpcs": 2, "failed": 1}
 * </pre>
 *
 * <p>It loops (one RPC, then --interval-ms of rest) until stdin reaches
 * end of file (an RPC then in flight is cancelled and not reported), or
 * makes --count RPCs and exits. Exit status 0 once stopped as asked,
 * even when RPCs failed: the caller judges them.
 *
 * <p>--a65-tls: grpc-java 1.85 accepts the channel_creds type "tls" but
 * ignores its config (its TlsXdsCredentialsProvider makes TLS
 * credentials with the JVM's trust store and no client certificate).
 * grpc-xds finds its credentials providers with java.util.ServiceLoader
 * and takes the one of highest priority per type: this client's
 * classes carry A65TlsProvider (META-INF/services), which reads the
 * config as "gRFC A65" says (ca_certificate_file, certificate_file,
 * private_key_file), ranks above grpc-xds's own, and is available only
 * when this option is given.
 */
public final class Client {
  private static final String METHOD = "xdsd.test.Echo/Who";
  private static final String VERSION = "1.85.1";

  /** The backends' messages as they are: an empty request, the backend's name back. */
  private static final MethodDescriptor.Marshaller<byte[]> RAW =
      new MethodDescriptor.Marshaller<byte[]>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw Status.INTERNAL.withCause(e).asRuntimeException();
          }
        }
      };

  private static final MethodDescriptor<byte[], byte[]> WHO =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName(METHOD)
          .setRequestMarshaller(RAW)
          .setResponseMarshaller(RAW)
          .build();

  /** Set by --a65-tls, before grpc-xds first loads its providers. */
  static volatile boolean a65Tls;

  /** "gRFC A65"'s "tls" channel credentials, from the bootstrap's config. */
  public static final class A65TlsProvider extends XdsCredentialsProvider {
    @Override
    protected ChannelCredentials newChannelCredentials(Map<String, ?> config) {
      TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
      try {
        Object ca = config == null ? null : config.get("ca_certificate_file");
        Object cert = config == null ? null : config.get("certificate_file");
        Object key = config == null ? null : config.get("private_key_file");
        if (ca instanceof String) {
          b.trustManager(new File((String) ca));
        }
        if (cert instanceof String && key instanceof String) {
          b.keyManager(new File((String) cert), new File((String) key));
        } else if (cert != null || key != null) {
          System.err.println("client: tls channel_creds: certificate_file and "
              + "private_key_file go together");
          return null;
        }
      } catch (IOException e) {
        System.err.println("client: tls channel_creds: " + e);
        return null;
      }
      return b.build();
    }

    @Override
    protected String getName() {
      return "tls";
    }

    @Override
    public boolean isAvailable() {
      return a65Tls;
    }

    @Override
    public int priority() {
      return 9; // above grpc-xds's own (5)
    }
  }

  private static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        case '\n': b.append("\\n"); break;
        case '\r': b.append("\\r"); break;
        case '\t': b.append("\\t"); break;
        default:
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
      }
    }
    return b.append('"').toString();
  }

  private static void emit(String json) {
    System.out.println(json);
    System.out.flush();
  }

  private static double ms(long nanos) {
    return Math.round(nanos / 100_000.0) / 10.0;
  }

  private static void usage() {
    System.err.println("usage: Client [--bootstrap FILE] [--count N] [--interval-ms MS] "
        + "[--first-deadline S] [--deadline S] [--a65-tls] xds:///NAME");
    System.exit(2);
  }

  public static void main(String[] argv) throws Exception {
    String bootstrap = null;
    String target = null;
    int count = 0;
    double intervalMs = 20;
    double firstDeadline = 20;
    double deadline = 5;
    boolean a65 = false;
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if (a.equals("--a65-tls")) {
        a65 = true;
        continue;
      }
      if (a.startsWith("--")) {
        if (i + 1 >= argv.length) {
          usage();
        }
        String v = argv[++i];
        switch (a) {
          case "--bootstrap": bootstrap = v; break;
          case "--count": count = Integer.parseInt(v); break;
          case "--interval-ms": intervalMs = Double.parseDouble(v); break;
          case "--first-deadline": firstDeadline = Double.parseDouble(v); break;
          case "--deadline": deadline = Double.parseDouble(v); break;
          default: usage();
        }
      } else if (target == null) {
        target = a;
      } else {
        usage();
      }
    }
    if (target == null) {
      usage();
    }
    // grpc-java reads the environment variable, then this property,
    // when the first xds channel is made.
    if (bootstrap != null) {
      System.setProperty("io.grpc.xds.bootstrap", new File(bootstrap).getAbsolutePath());
    } else if (System.getenv("GRPC_XDS_BOOTSTRAP") == null) {
      System.err.println("client: no bootstrap: pass --bootstrap or set GRPC_XDS_BOOTSTRAP");
      System.exit(2);
    }
    // The xDS client's trace on stderr (its XdsLogger writes at FINE
    // and below).
    Logger xds = Logger.getLogger("io.grpc.xds");
    ConsoleHandler h = new ConsoleHandler();
    h.setLevel(Level.FINEST);
    h.setFormatter(new SimpleFormatter());
    xds.addHandler(h);
    xds.setLevel(Level.FINEST);
    a65Tls = a65;

    final Thread main = Thread.currentThread();
    final boolean[] stopped = {false};
    if (count == 0) {
      Thread watch = new Thread(() -> {
        try {
          while (System.in.read(new byte[4096]) >= 0) {
            // keep reading until end of file
          }
        } catch (IOException e) {
          // the same as end of file
        }
        // Under the lock: once the main thread sees stopped, the
        // interrupt has come, and no other will.
        synchronized (stopped) {
          stopped[0] = true;
          main.interrupt();
        }
      });
      watch.setDaemon(true);
      watch.start();
    }

    emit("{\"client\": " + quote("java grpc " + VERSION) + ", \"event\": \"start\", "
        + "\"target\": " + quote(target) + "}");
    // Plaintext to the backends; the channel to the xDS server has the
    // credentials the bootstrap's channel_creds name.
    ManagedChannel channel =
        Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    int seq = 0;
    int failed = 0;
    while (count == 0 || seq < count) {
      synchronized (stopped) {
        if (stopped[0]) {
          break;
        }
      }
      seq++;
      double limit = seq == 1 ? firstDeadline : deadline;
      long t0 = System.nanoTime();
      CallOptions opts = CallOptions.DEFAULT.withDeadlineAfter(
          (long) (limit * 1000), TimeUnit.MILLISECONDS);
      String line;
      try {
        byte[] reply = ClientCalls.blockingUnaryCall(channel, WHO, opts, new byte[0]);
        line = "{\"ms\": " + ms(System.nanoTime() - t0) + ", \"ok\": true, \"seq\": " + seq
            + ", \"who\": " + quote(new String(reply, StandardCharsets.UTF_8)) + "}";
      } catch (StatusRuntimeException e) {
        line = "{\"code\": " + quote(e.getStatus().getCode().name()) + ", \"details\": "
            + quote(e.getStatus().getDescription() == null ? "" : e.getStatus().getDescription())
            + ", \"ms\": " + ms(System.nanoTime() - t0) + ", \"ok\": false, \"seq\": " + seq + "}";
        failed++;
      }
      boolean stop;
      synchronized (stopped) {
        stop = stopped[0];
      }
      if (stop) {
        // Asked to stop mid-RPC (the interrupt cancels it): abandoned
        // and not reported.
        if (line.contains("\"ok\": false")) {
          failed--;
        }
        seq--;
        break;
      }
      emit(line);
      try {
        Thread.sleep((long) intervalMs);
      } catch (InterruptedException e) {
        break;
      }
    }
    Thread.interrupted(); // the stop's interrupt, if it is still pending
    channel.shutdownNow();
    channel.awaitTermination(5, TimeUnit.SECONDS);
    emit("{\"event\": \"done\", \"failed\": " + failed + ", \"rpcs\": " + seq + "}");
    System.exit(0);
  }
}
