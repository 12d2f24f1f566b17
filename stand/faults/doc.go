// Package faults holds the fault matrix: its test runs every program of the
// course (lectures/*/cmd and stand/cmd) against every fault a program may
// meet (no cluster, a login wanted or refused, a TLS mismatch, no
// permission, a write or read refused, a broker that never answers a write
// or a read) and checks that each one ends within its bound, with exit status
// 1 and one line on stderr that names the fault. A new program gets a row in
// the test's table, and the test fails for a program under lectures/*/cmd or
// stand/cmd that has none.
package faults
