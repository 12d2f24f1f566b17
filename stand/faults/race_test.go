//go:build race

package faults

// raceBuild: this test binary runs under the race detector (make check).
const raceBuild = true
