package org.ipamoperators.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** One in-process run of the {@code ipam} command line: its exit status and what it printed. */
public record IpamRun(int exit, String out, String err) {

  public static IpamRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = IpamCommand.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int exit = cl.execute(args);
    return new IpamRun(exit, out.toString(), err.toString());
  }
}
