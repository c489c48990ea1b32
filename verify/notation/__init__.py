"""Layouts as libraries print them: Triton shared encodings, CuTe builders
(`tile_to_shape`, GMMA atoms) and TMA boxes, each lowered to verify's layouts."""
