package org.ipamoperators.keepalived;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.config.InstancePlan;
import org.ipamoperators.keepalived.config.KeepalivedConfigRenderer;
import org.ipamoperators.keepalived.config.KeepalivedGroupModel;
import org.ipamoperators.keepalived.config.KeepalivedNode;
import org.ipamoperators.keepalived.config.Notice;
import org.ipamoperators.keepalived.config.RenderedConfig;
import org.ipamoperators.keepalived.config.VipHandover;

/**
 * What a reconcile decided for a group: its nodes, the Services it announces, its router ids (in space
 * {@code space}), the VRRP instances with their problems, every node's keepalived.conf, and the VIPs that wait for
 * another group to let go of them.
 */
record GroupPlan(List<KeepalivedNode> nodes, ServiceSelection services, String space, RouterIds.Result ids,
    InstancePlan.Assembly assembly, Rendering rendering, List<VipHandover.Deferred> deferred) {

  /** Every node's keepalived.conf by node name, and what the user should know about them. */
  record Rendering(SortedMap<String, String> configs, Set<Notice> notices) {
    static Rendering of(KeepalivedGroupModel model) {
      SortedMap<String, String> configs = new TreeMap<>();
      Set<Notice> notices = new LinkedHashSet<>();
      for (KeepalivedNode node : model.nodes()) {
        RenderedConfig rc = KeepalivedConfigRenderer.render(model, node.name());
        configs.put(node.name(), rc.text());
        notices.addAll(rc.notices());
      }
      return new Rendering(configs, notices);
    }
  }

  int instances() {
    return assembly.model().instances().size();
  }

  long vipCount() {
    return assembly.model().instances().stream().mapToLong(i -> i.vips().size()).sum();
  }

  /** The Events of this plan: on the Services, then router ids that moved and notices of the configuration. */
  List<GroupReport.Note> notes(KeepalivedGroup group) {
    List<GroupReport.Note> notes = new ArrayList<>(services.notes());
    for (String moved : ids.moved()) {
      notes.add(GroupReport.Note.normal(group, "RouterIDMoved", "the router id of " + moved + " is blacklisted now: "
          + (ids.ids().containsKey(moved) ? "it moves to " + ids.ids().get(moved) : "no other id is free")));
    }
    for (Notice n : rendering.notices()) {
      notes.add(GroupReport.Note.normal(group, "ConfigNotice", n.toString()));
    }
    return notes;
  }
}
