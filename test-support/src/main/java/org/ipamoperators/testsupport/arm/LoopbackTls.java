package org.ipamoperators.testsupport.arm;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The server's TLS on 127.0.0.1 (the Azure SDK's bearer-token policy refuses {@code http}): the
 * server's context and a client context that trusts this certificate and nothing else.
 */
record LoopbackTls(SSLContext server, SSLContext client) {
  private static KeyStore cachedStore;

  static LoopbackTls create() {
    try {
      char[] pass = "changeit".toCharArray();
      KeyStore store = keyStore(pass);
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(store, pass);
      SSLContext serverSsl = SSLContext.getInstance("TLS");
      serverSsl.init(kmf.getKeyManagers(), null, null);
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("arm", store.getCertificate("arm"));
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext clientSsl = SSLContext.getInstance("TLS");
      clientSsl.init(null, tmf.getTrustManagers(), null);
      return new LoopbackTls(serverSsl, clientSsl);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** One key pair per JVM, made by the JDK's keytool (SAN IP:127.0.0.1); never written anywhere lasting. */
  private static synchronized KeyStore keyStore(char[] pass) throws IOException, GeneralSecurityException {
    if (cachedStore != null) {
      return cachedStore;
    }
    Path dir = Files.createTempDirectory("arm-server");
    Path ks = dir.resolve("arm.p12");
    try {
      Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
          "-genkeypair", "-alias", "arm", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
          "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", "PKCS12",
          "-keystore", ks.toString(), "-storepass", new String(pass), "-keypass", new String(pass))
          .redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException("keytool failed: " + out);
      }
      KeyStore store = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(ks)) {
        store.load(in, pass);
      }
      cachedStore = store;
      return store;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } finally {
      Files.deleteIfExists(ks);
      Files.deleteIfExists(dir);
    }
  }
}
