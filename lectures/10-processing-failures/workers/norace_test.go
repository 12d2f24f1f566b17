//go:build !race

package workers_test

const raceBuild = false
