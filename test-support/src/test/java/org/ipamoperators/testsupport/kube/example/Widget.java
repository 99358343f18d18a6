package org.ipamoperators.testsupport.kube.example;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.List;

/** The test CRD {@code widgets.test.ipamoperators.org} as a typed custom resource. */
@Group("test.ipamoperators.org")
@Version("v1")
@Kind("Widget")
@Plural("widgets")
public class Widget extends CustomResource<Widget.Spec, Widget.Status> implements Namespaced {

  private static final long serialVersionUID = 1L;

  public static class Spec {
    private String cidr;
    private int size;
    private String mode;

    public String getCidr() {
      return cidr;
    }

    public void setCidr(String cidr) {
      this.cidr = cidr;
    }

    public int getSize() {
      return size;
    }

    public void setSize(int size) {
      this.size = size;
    }

    public String getMode() {
      return mode;
    }

    public void setMode(String mode) {
      this.mode = mode;
    }
  }

  public static class Status {
    private String phase;
    private List<String> allocated;

    public String getPhase() {
      return phase;
    }

    public void setPhase(String phase) {
      this.phase = phase;
    }

    public List<String> getAllocated() {
      return allocated;
    }

    public void setAllocated(List<String> allocated) {
      this.allocated = allocated;
    }
  }
}
