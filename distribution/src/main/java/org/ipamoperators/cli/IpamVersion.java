package org.ipamoperators.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine;

/** {@code ipam --version}: the project version the build wrote into {@code ipam-version.properties}. */
final class IpamVersion implements CommandLine.IVersionProvider {
  static final String RESOURCE = "ipam-version.properties";

  @Override
  public String[] getVersion() {
    return new String[] {"ipam " + version()};
  }

  /** The build's version; a class path without the filtered resource is a broken build, said as such. */
  static String version() {
    try (InputStream in = IpamVersion.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        return "(unknown: " + RESOURCE + " missing from the class path)";
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version", "(unknown)");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
