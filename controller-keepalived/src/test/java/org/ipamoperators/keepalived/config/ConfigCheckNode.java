package org.ipamoperators.keepalived.config;

import java.util.HashSet;
import java.util.Set;
import org.ipamoperators.testsupport.keepalived.ConfigCheck;
import org.ipamoperators.testsupport.keepalived.Keepalived;
import org.ipamoperators.testsupport.netns.NetnsExtension;
import org.ipamoperators.testsupport.netns.NetworkLab;
import org.ipamoperators.testsupport.netns.NetworkNamespace;

/**
 * A network namespace in which the real {@code keepalived --config-test} judges configurations: keepalived checks
 * that the interfaces of the instances exist, so the namespace gets each interface a configuration names (a veth
 * end; the other end sits in a second namespace) before checking it.
 */
public final class ConfigCheckNode implements AutoCloseable {

  private final Keepalived keepalived = Keepalived.locate();
  private final NetworkLab lab;
  private final NetworkNamespace node;
  private final NetworkNamespace peer;
  private final Set<String> interfaces = new HashSet<>();

  public ConfigCheckNode() {
    NetnsExtension.requireNetworkNamespaces();
    lab = NetworkLab.create();
    try {
      node = lab.namespace("check");
      peer = lab.namespace("check-peer");
    } catch (RuntimeException e) {
      lab.close();
      throw e;
    }
  }

  /** keepalived's verdict on {@code config}, in a namespace that has the interfaces it names. */
  public synchronized ConfigCheck check(String config) {
    for (String name : RenderedConfigs.interfaces(config)) {
      if (interfaces.add(name)) {
        lab.veth(node, name, peer, "p" + interfaces.size());
        node.addAddress(name, "192.0.2." + (200 + interfaces.size()) + "/24");
      }
    }
    return keepalived.checkConfig(config, node);
  }

  /** keepalived's verdict on {@code config} as the namespace is (only interfaces earlier configurations named). */
  synchronized ConfigCheck checkAsIs(String config) {
    return keepalived.checkConfig(config, node);
  }

  @Override
  public void close() {
    lab.close();
  }
}
