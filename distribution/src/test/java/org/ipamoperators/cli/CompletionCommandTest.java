package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ipam completion bash|zsh}: a script that the real bash loads and that completes every subcommand. */
class CompletionCommandTest {
  private static final Set<String> SUBCOMMANDS = IpamCommand.commandLine().getSubcommands().keySet();

  @Test
  void bashAndZshGetAScriptThatNamesEverySubcommand() {
    assertThat(SUBCOMMANDS).contains("plan", "demo", "operator", "audit", "completion", "help");
    for (String shell : List.of("bash", "zsh")) {
      IpamRun r = IpamRun.of("completion", shell);
      assertThat(r.exit()).as(r.err()).isZero();
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).contains("complete -F _complete_ipam").contains("bashcompinit");
      SUBCOMMANDS.forEach(name -> assertThat(r.out()).as(name).contains(name));
    }
  }

  @Test
  void anUnknownShellIsRefusedWithTheChoices() {
    IpamRun r = IpamRun.of("completion", "fish");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("fish").contains("bash").contains("zsh");
  }

  @Test
  void theRealBashCompletesTheSubcommandsAndTheirOptions(@TempDir Path dir) throws Exception {
    Path script = dir.resolve("ipam.bash");
    Files.writeString(script, IpamRun.of("completion", "bash").out());
    // What bash does on `ipam <TAB>` and on `ipam audit --<TAB>`.
    String words = complete(script, "ipam ''", 1);
    assertThat(words.split("\\s+")).containsAll(SUBCOMMANDS);
    String auditOptions = complete(script, "ipam audit --", 2);
    assertThat(auditOptions).contains("--help");
    assertThat(auditOptions.split("\\s+")).allMatch(w -> w.startsWith("--"));
  }

  private static String complete(Path script, String commandLine, int cword) throws Exception {
    // compopt works only while readline runs a completion; here, outside one, it does nothing.
    String program = "source " + script + " && complete -p ipam >/dev/null && compopt() { :; }"
        + " && COMP_WORDS=(" + commandLine + ")"
        + " && COMP_CWORD=" + cword + " && COMP_LINE=\"${COMP_WORDS[*]}\" && COMP_POINT=${#COMP_LINE}"
        + " && _complete_ipam && echo \"${COMPREPLY[*]}\"";
    Process p = new ProcessBuilder("bash", "--norc", "--noprofile", "-c", program).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(err).isZero();
    assertThat(err).isEmpty();
    return out.strip();
  }
}
