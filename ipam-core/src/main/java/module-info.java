/**
 * Pure IP address management: pools, allocators, ledger rebuild, placement, failover planning and
 * the {@code NodeNetwork} SPI the cloud modules implement. No Kubernetes, no cloud, no I/O.
 *
 * <p>Every exported package is public API, checked for binary compatibility at each build; types
 * that are not public (such as the allocator's range tree) are internal. {@code ipaddress} is
 * required transitively because {@link org.ipamoperators.core.address.Ip} converts to and from its
 * {@code IPAddress}.
 *
 * @uses org.ipamoperators.core.spi.NodeNetworkProvider
 */
module org.ipamoperators.core {
  requires transitive inet.ipaddr;

  exports org.ipamoperators.core.address;
  exports org.ipamoperators.core.allocation;
  exports org.ipamoperators.core.failover;
  exports org.ipamoperators.core.ledger;
  exports org.ipamoperators.core.placement;
  exports org.ipamoperators.core.plan;
  exports org.ipamoperators.core.pool;
  exports org.ipamoperators.core.spi;

  uses org.ipamoperators.core.spi.NodeNetworkProvider;
}
