//go:build race

package workers_test

// raceBuild: this test binary runs under the race detector (make check).
const raceBuild = true
