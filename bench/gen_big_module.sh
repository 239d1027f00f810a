#!/usr/bin/env bash
# Writes an HLO module of about N instructions (default 10,000) to stdout: an
# unrolled stack of small layers, each a dot, a bias add, an activation, a
# softmax-like normalisation and a residual add, the shapes of a real model's
# step. It exists to time the optimizer (make bench), not to compute anything.
n=${1:-10000}
awk -v n="$n" 'BEGIN {
  print "HloModule big_module_" n ", entry_computation_layout={(f32[64,128]{1,0}, f32[128,128]{1,0}, f32[128]{0})->f32[64,128]{1,0}}"
  print ""
  print "region_max {"
  print "  a = f32[] parameter(0)"
  print "  b = f32[] parameter(1)"
  print "  ROOT m = f32[] maximum(a, b)"
  print "}"
  print ""
  print "region_add {"
  print "  a = f32[] parameter(0)"
  print "  b = f32[] parameter(1)"
  print "  ROOT s = f32[] add(a, b)"
  print "}"
  print ""
  print "ENTRY main {"
  print "  x.0 = f32[64,128]{1,0} parameter(0)"
  print "  w = f32[128,128]{1,0} parameter(1)"
  print "  bias = f32[128]{0} parameter(2)"
  print "  zero = f32[] constant(0)"
  print "  ninf = f32[] constant(-inf)"
  print "  half = f32[] constant(0.5)"
  count = 9; layer = 0; x = "x.0"
  while (count + 20 < n) {
    l = layer++
    printf "  d.%d = f32[64,128]{1,0} dot(%s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", l, x
    printf "  bb.%d = f32[64,128]{1,0} broadcast(bias), dimensions={1}\n", l
    printf "  a.%d = f32[64,128]{1,0} add(d.%d, bb.%d)\n", l, l, l
    printf "  z.%d = f32[64,128]{1,0} broadcast(zero), dimensions={}\n", l
    printf "  r.%d = f32[64,128]{1,0} maximum(a.%d, z.%d)\n", l, l, l
    printf "  mx.%d = f32[64]{0} reduce(r.%d, ninf), dimensions={1}, to_apply=region_max\n", l, l
    printf "  mb.%d = f32[64,128]{1,0} broadcast(mx.%d), dimensions={0}\n", l, l
    printf "  sh.%d = f32[64,128]{1,0} subtract(r.%d, mb.%d)\n", l, l, l
    printf "  e.%d = f32[64,128]{1,0} exponential(sh.%d)\n", l, l
    printf "  sm.%d = f32[64]{0} reduce(e.%d, zero), dimensions={1}, to_apply=region_add\n", l, l
    printf "  sb.%d = f32[64,128]{1,0} broadcast(sm.%d), dimensions={0}\n", l, l
    printf "  p.%d = f32[64,128]{1,0} divide(e.%d, sb.%d)\n", l, l, l
    printf "  hb.%d = f32[64,128]{1,0} broadcast(half), dimensions={}\n", l
    printf "  q.%d = f32[64,128]{1,0} multiply(p.%d, hb.%d)\n", l, l, l
    printf "  t.%d = f32[128,64]{1,0} transpose(q.%d), dimensions={1,0}\n", l, l
    printf "  u.%d = f32[64,128]{1,0} transpose(t.%d), dimensions={1,0}\n", l, l
    printf "  c.%d = f32[64,128]{1,0} add(u.%d, %s)\n", l, l, x
    printf "  n.%d = f32[64,128]{1,0} negate(c.%d)\n", l, l
    printf "  x.%d = f32[64,128]{1,0} negate(n.%d)\n", l + 1, l
    x = sprintf("x.%d", l + 1)
    count += 19
  }
  printf "  ROOT out = f32[64,128]{1,0} copy(%s)\n", x
  print "}"
}'
