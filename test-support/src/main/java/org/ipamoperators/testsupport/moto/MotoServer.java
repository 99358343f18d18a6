package org.ipamoperators.testsupport.moto;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.OrphanGuard;
import org.ipamoperators.testsupport.TestBinaries;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.profiles.ProfileFile;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.ec2.Ec2Client;

/**
 * moto's server mode ({@code moto_server}) on a free 127.0.0.1 port, speaking the AWS APIs over HTTP.
 *
 * <p>{@link #shared()} starts one per JVM and stops it when the JVM exits; {@link #reset()} forgets all state.
 * moto is faithful to request and response shapes but not to every rule: for instance
 * AssignPrivateIpAddresses does not check subnet membership, collisions or per-instance limits, and filters it
 * does not implement (e.g. DescribeNetworkInterfaces {@code attachment.device-index} in 5.1) answer 500. The
 * {@link MotoExtension} attaches moto's traceback to a failing test.
 */
public final class MotoServer {

  /** The region clients use; moto keeps state per region. */
  public static final Region REGION = Region.US_EAST_1;

  private static final Logger LOG = LoggerFactory.getLogger(MotoServer.class);
  private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(60);

  private static MotoServer shared;
  private static RuntimeException sharedStartFailure;

  private final Process process;
  private final Path log;
  private final URI endpoint;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  private MotoServer(Path motoServer) {
    int port = LoopbackPorts.freePort();
    this.endpoint = URI.create("http://127.0.0.1:" + port);
    try {
      this.log = Files.createTempFile("ipam-moto-", ".log");
      ProcessBuilder builder = new ProcessBuilder(OrphanGuard.guard(List.of(motoServer.toString(), "-H", "127.0.0.1",
          "-p", Integer.toString(port))))
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
      // A caller's AWS settings must not change the server's behaviour.
      builder.environment().keySet().removeIf(k -> k.startsWith("AWS_") || k.startsWith("MOTO_"));
      this.process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start " + motoServer, e);
    }
    awaitReady();
  }

  /**
   * The moto server of this JVM, started on first call. If the start failed, later calls fail at once with the
   * same cause.
   */
  public static synchronized MotoServer shared() {
    if (sharedStartFailure != null) {
      throw new IllegalStateException("moto_server failed to start earlier in this JVM", sharedStartFailure);
    }
    if (shared == null) {
      Path binary = TestBinaries.fromEnvironment().motoServer();
      try {
        shared = new MotoServer(binary);
      } catch (RuntimeException e) {
        sharedStartFailure = e;
        throw e;
      }
      Runtime.getRuntime().addShutdownHook(new Thread(shared::stop, "moto-server-stop"));
    }
    return shared;
  }

  /** {@code http://127.0.0.1:<port>}, for {@code endpointOverride}. */
  public URI endpoint() {
    return endpoint;
  }

  /** Forgets every resource in every service and region ({@code POST /moto-api/reset}). */
  public void reset() {
    HttpResponse<String> response = send(HttpRequest.newBuilder(endpoint.resolve("/moto-api/reset"))
        .POST(HttpRequest.BodyPublishers.noBody()).build());
    if (response.statusCode() != 200) {
      throw new IllegalStateException("moto reset answered " + response.statusCode() + ": " + response.body());
    }
  }

  /**
   * A new EC2 client for this server: region us-east-1, static credentials {@code test}/{@code test}, the JDK
   * URL-connection HTTP client, and an empty profile file so that nothing in {@code ~/.aws} applies. The caller
   * closes it.
   */
  public Ec2Client ec2Client() {
    ProfileFile noProfiles = ProfileFile.builder()
        .content(new java.io.ByteArrayInputStream(new byte[0]))
        .type(ProfileFile.Type.CONFIGURATION)
        .build();
    return Ec2Client.builder()
        .endpointOverride(endpoint)
        .region(REGION)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
        .httpClientBuilder(UrlConnectionHttpClient.builder())
        .overrideConfiguration(o -> o.defaultProfileFile(noProfiles).defaultProfileName("default"))
        .build();
  }

  /** Stops the server. Idempotent. */
  public synchronized void stop() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
    try {
      Files.deleteIfExists(log);
    } catch (IOException e) {
      LOG.debug("Cannot delete {}", log, e);
    }
  }

  private void awaitReady() {
    long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException("moto_server exited with " + process.exitValue() + ":\n" + logTail());
      }
      try {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(endpoint.resolve("/moto-api/reset"))
            .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(5)).build(),
            HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() == 200) {
          LOG.info("moto_server ready at {}", endpoint);
          return;
        }
      } catch (ConnectException e) {
        // not listening yet
      } catch (IOException e) {
        LOG.debug("moto_server not ready", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting for moto_server", e);
      }
      if (System.nanoTime() > deadline) {
        process.destroyForcibly();
        throw new IllegalStateException("moto_server not ready within " + STARTUP_TIMEOUT + ":\n" + logTail());
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting for moto_server", e);
      }
    }
  }

  private HttpResponse<String> send(HttpRequest request) {
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException("moto_server at " + endpoint + " unreachable" + (process.isAlive() ? ""
          : " (exited with " + process.exitValue() + "):\n" + logTail()), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while calling moto_server", e);
    }
  }

  /** The current length of moto's log, to read what a test caused with {@link #logSince(long)}. */
  public long logPosition() {
    try {
      return Files.size(log);
    } catch (IOException e) {
      return 0;
    }
  }

  /** What moto logged after {@code position} (request lines and Python tracebacks). */
  public String logSince(long position) {
    try (var channel = Files.newByteChannel(log)) {
      channel.position(Math.min(position, channel.size()));
      var buffer = java.nio.ByteBuffer.allocate((int) Math.min(channel.size() - channel.position(), 1 << 20));
      while (buffer.hasRemaining() && channel.read(buffer) > 0) {
        // read up to 1 MiB
      }
      return new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }
}
