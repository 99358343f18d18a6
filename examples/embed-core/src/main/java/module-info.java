/** The example is a named module too: it reads ipam-core by its module name. */
module org.example.embed {
  requires org.ipamoperators.core;

  exports org.example.embed;
}
