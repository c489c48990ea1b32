"""verify: symbolic verification of GPU shared-memory layouts, swizzles and bank conflicts."""
