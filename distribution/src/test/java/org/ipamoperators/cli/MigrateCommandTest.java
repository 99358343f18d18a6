package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.ipamoperators.cli.migrate.MigrationReport;
import org.ipamoperators.cli.migrate.MigrationReport.Blocker;
import org.ipamoperators.cli.migrate.MigrationReport.Section;
import org.junit.jupiter.api.Test;

class MigrateCommandTest {

  @Test
  void textNumbersTheStepsAndSaysWhatBlocks() {
    MigrationReport report = new MigrationReport(List.of(
        new Section("keepalived-operator", "keepalived", false, Map.of(), List.of(), List.of(), List.of()),
        new Section("k8s-eip-operator", "eip", true, Map.of("Eip", 1), List.of("Eip shop/web: kept"),
            List.of(new Blocker("owned by another manager", "kubectl apply --force-conflicts")),
            List.of("kubectl scale deploy/eip-operator --replicas=0 -n eip", "ipam audit"))));
    assertThat(MigrateCommand.text(report)).isEqualTo("""
        keepalived-operator: not installed
        k8s-eip-operator -> controllers.eip {Eip=1}
          adopted: Eip shop/web: kept
          BLOCKER: owned by another manager
            fix: kubectl apply --force-conflicts
          steps:
            1. kubectl scale deploy/eip-operator --replicas=0 -n eip
            2. ipam audit
        blocked: fix each BLOCKER above, then run the steps
        """);
  }
}
