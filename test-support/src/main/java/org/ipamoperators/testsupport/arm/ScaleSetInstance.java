package org.ipamoperators.testsupport.arm;

/** An instance of a Uniform scale set: its id, its NIC's id and its name ({@code <set>_<instance>}). */
record ScaleSetInstance(String id, String nicId, String name) {}
