package org.ipamoperators.cloud.aws;

import java.util.Map;
import org.ipamoperators.conformance.NodeNetworkProviderContract;
import org.ipamoperators.core.spi.ProviderContext;

/** The EC2 provider is found on the class path; it needs a region and refuses half a key pair. */
class Ec2ProviderConformanceTest extends NodeNetworkProviderContract {
  @Override
  protected String providerName() {
    return Ec2NodeNetworkProvider.NAME;
  }

  @Override
  protected ProviderContext usableContext() {
    return new ProviderContext("AWS", Map.of("region", "us-east-1"), Map.of("aws.endpoint", "http://127.0.0.1:1"),
        Map.of(Ec2NodeNetworkProvider.CREDENTIALS_SECRET, Map.of("aws_access_key_id", "AKIDEXAMPLE",
            "aws_secret_access_key", "not-a-real-secret")));
  }

  @Override
  protected ProviderContext unusableContext() {
    return ProviderContext.of("AWS"); // no region anywhere
  }
}
