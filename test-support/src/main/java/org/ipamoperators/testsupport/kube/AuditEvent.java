package org.ipamoperators.testsupport.kube;

/**
 * One request as the apiserver's audit log records it (Metadata level).
 *
 * @param auditId the request's id
 * @param username who made it, e.g. {@code system:serviceaccount:ns:name}
 * @param verb the authorization verb: get, list, watch, create, update, patch, delete, deletecollection (or a
 *     non-resource request's method)
 * @param apiGroup the object's API group, empty for the core group; null for a non-resource request
 * @param resource the resource's plural, e.g. {@code services}; null for a non-resource request
 * @param subresource e.g. {@code status}, or null
 * @param namespace the object's namespace, or null
 * @param name the object's name, or null
 * @param code the response's status code (0 when the log holds no response yet)
 */
public record AuditEvent(String auditId, String username, String verb, String apiGroup, String resource,
    String subresource, String namespace, String name, int code) {

  /** {@code resource} or {@code resource/subresource}, as RBAC rules name them. */
  public String rbacResource() {
    return subresource == null || subresource.isEmpty() ? resource : resource + "/" + subresource;
  }
}
