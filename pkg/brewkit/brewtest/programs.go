package brewtest

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A program and the package it runs share a name, so that a student who
// reads `go run ./cmd/users` knows which folder holds its lesson: cmd/users
// runs package users, cmd/retry-topics runs package retrytopics (a package
// name has no hyphens). checkProgramNames holds a lecture to it: a program
// under cmd/ that imports packages of its lecture imports one named for it.
// A program that imports none (its lesson is its main package) agrees.
//
// The programs that do not agree yet are listed in
// testdata/program-names.txt, one "cmd/NAME" a line ("#" starts a comment):
// a list that only shrinks. A program not on it that disagrees fails, and so
// does a line whose program now agrees or is gone.

const programNamesFile = "testdata/program-names.txt"

// checkProgramNames is the check above for the lecture in dir.
func checkProgramNames(t testing.TB, dir string) {
	t.Helper()
	module, err := modulePath(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatalf("the lecture's module: %v", err)
	}
	listed, err := readNameList(filepath.Join(dir, programNamesFile))
	if err != nil {
		t.Fatalf("%s: %v", programNamesFile, err)
	}
	mains, _ := filepath.Glob(filepath.Join(dir, "cmd", "*", "main.go"))
	seen := map[string]bool{}
	for _, m := range mains {
		prog := "cmd/" + filepath.Base(filepath.Dir(m))
		seen[prog] = true
		names, err := lecturePackages(dir, filepath.Dir(m), module)
		if err != nil {
			t.Errorf("%s: %v", prog, err)
			continue
		}
		want := strings.ReplaceAll(filepath.Base(prog), "-", "")
		agrees := len(names) == 0 || slices.Contains(names, want)
		switch {
		case !agrees && !listed[prog]:
			t.Errorf("%s runs package %s of its lecture and none named %s: name the program for its package or the package for its program", prog, strings.Join(names, ", "), want)
		case agrees && listed[prog]:
			t.Errorf("%s lists %s, whose package now has its name: take the line out", programNamesFile, prog)
		}
	}
	for prog := range listed {
		if !seen[prog] {
			t.Errorf("%s lists %s, which is no program of the lecture: take the line out", programNamesFile, prog)
		}
	}
}

// lecturePackages lists the names of the packages of module that the
// non-test Go files in cmdDir import.
func lecturePackages(dir, cmdDir, module string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(cmdDir, "*.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		for _, im := range ast.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			rel, ok := strings.CutPrefix(p, module+"/")
			if !ok {
				continue
			}
			name, err := packageName(filepath.Join(dir, filepath.FromSlash(rel)))
			if err != nil {
				return nil, err
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// packageName is the package clause of the first non-test Go file in dir.
func packageName(dir string) (string, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly)
		if err != nil {
			return "", err
		}
		return ast.Name.Name, nil
	}
	return "", fmt.Errorf("no Go file in %s", dir)
}

// modulePath reads the module line of a go.mod file.
func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", gomod)
}

// readNameList reads a list of one word a line, "#" starting a comment; a
// missing file is an empty list.
func readNameList(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l, _, _ := strings.Cut(sc.Text(), "#")
		if l = strings.TrimSpace(l); l != "" {
			out[l] = true
		}
	}
	return out, sc.Err()
}
