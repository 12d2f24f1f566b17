# Sourced by scripts/test and .ci/run: the Go flags every go command of a
# tier and of a CI run shares, so that a package compiles once for all of
# them (-trimpath changes every compile's action ID: a command without it
# compiles its packages a second time).
#
# Each test binary is linked without its DWARF tables (-ldflags=-w):
# nothing here runs them under a debugger, stack traces need none, and a
# tier links about 180 of them. Measured on lecture 06's timeline.test: 1.75
# CPU-seconds a link with DWARF, 1.15 without. A GOFLAGS that sets -ldflags
# is left as it is.
case " ${GOFLAGS:-} " in
*" -ldflags"*) ;;
*) export GOFLAGS="${GOFLAGS:+$GOFLAGS }-ldflags=-w" ;;
esac
# And with -trimpath: a package's compiled form then does not depend on the
# folder of the checkout, so that a clean clone elsewhere (CI's) finds
# Go's build cache and the test binaries (BREW_TESTBIN) of an earlier
# clone of the same code, instead of compiling the workspace anew (60 CPU-s
# here for one lecture's packages under -race). A program then has no
# source folder to find files beside (runtime.Caller): the tests run in
# their packages' folders.
case " ${GOFLAGS:-} " in
*" -trimpath "*) ;;
*) export GOFLAGS="$GOFLAGS -trimpath" ;;
esac
