package brewtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A lecture README shows the few lines its lesson turns on in Go blocks, each
// right below a marker that names the file they are taken from, relative to
// the lecture's folder:
//
//	<!-- code: backpressure/courier.go -->
//	```go
//	cl.PauseFetchPartitions(full)
//	```
//
// checkCode holds each such block to its file: the block's lines appear in
// the file as consecutive lines (leading tabs and spaces aside, since a block
// shows the lines of a function body without its indentation), so a block
// that drifts from the source fails the lecture's test, as an output block
// that drifts from a run does. A line "// ..." in a block stands for any
// lines of the file between the lines around it. A Go block that is not an
// excerpt (a sketch of a client's calls, a test a student would write in
// their own repository) is marked <!-- sketch: why --> and is not compared.
//
// A README also opens its code with a reading list, between
// <!-- read-the-code --> and <!-- /read-the-code -->, one numbered line per
// file in the order a student reads them:
//
//	1. [`backpressure/courier.go`](backpressure/courier.go) `Courier.Run`: ...
//
// The backquoted names between the link and the first ": " are declared in
// that file (a function, a method as Type.Method, a type, a var or a const),
// so renaming one fails the test until the list follows.

// CodeBlock is one marked Go block of a README.
type CodeBlock struct {
	File string // the file it is taken from, "" for a sketch
	Text string // the block's lines, each ending in \n
	Line int    // the marker's line number
}

// ReadItem is one line of a README's reading list.
type ReadItem struct {
	File  string
	Names []string
	Line  int
}

var (
	codeMarkerRe = regexp.MustCompile(`^\s*<!-- (code|sketch): ?(.*?) -->\s*$`)
	goFenceRe    = regexp.MustCompile("^(\\s*)```go\\s*$")
	readOpenRe   = regexp.MustCompile(`^<!-- read-the-code -->\s*$`)
	readCloseRe  = regexp.MustCompile(`^<!-- /read-the-code -->\s*$`)
	readItemRe   = regexp.MustCompile("^\\d+\\. \\[`([^`]+)`\\]\\(([^)]+)\\)(.*)$")
	readNameRe   = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)`")
)

// parseCode returns the README's marked Go blocks and its reading list. A Go
// block without a marker, a marker not directly above a Go block, and a
// reading list line that is not a numbered link to a file are errors.
func parseCode(readme string) ([]CodeBlock, []ReadItem, error) {
	lines := strings.Split(readme, "\n")
	var blocks []CodeBlock
	var items []ReadItem
	var pending *CodeBlock
	var heads []string // each item's text after its link, wrapped lines joined
	inList, sawList := false, false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case readOpenRe.MatchString(l):
			if sawList {
				return nil, nil, fmt.Errorf("line %d: a second reading list", i+1)
			}
			inList, sawList = true, true
			continue
		case readCloseRe.MatchString(l):
			if !inList {
				return nil, nil, fmt.Errorf("line %d: <!-- /read-the-code --> without its opening marker", i+1)
			}
			inList = false
			continue
		case inList && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#"):
			m := readItemRe.FindStringSubmatch(l)
			if m == nil {
				if len(items) > 0 && strings.HasPrefix(l, "   ") {
					heads[len(heads)-1] += " " + strings.TrimSpace(l) // the item, wrapped
					continue
				}
				return nil, nil, fmt.Errorf("line %d: a reading list line is \"N. [`file`](file) `Name`: what it shows\", not %q", i+1, l)
			}
			if m[1] != m[2] {
				return nil, nil, fmt.Errorf("line %d: the link shows %s and goes to %s", i+1, m[1], m[2])
			}
			items = append(items, ReadItem{File: m[1], Line: i + 1})
			heads = append(heads, m[3])
			continue
		}
		if m := codeMarkerRe.FindStringSubmatch(l); m != nil {
			if pending != nil {
				return nil, nil, fmt.Errorf("line %d: marker is not followed by its go block", pending.Line)
			}
			if strings.TrimSpace(m[2]) == "" {
				return nil, nil, fmt.Errorf("line %d: %s: needs a file (code) or a reason (sketch)", i+1, m[1])
			}
			pending = &CodeBlock{Line: i + 1}
			if m[1] == "code" {
				pending.File = strings.TrimSpace(m[2])
			}
			continue
		}
		if m := goFenceRe.FindStringSubmatch(l); m != nil {
			if pending == nil {
				return nil, nil, fmt.Errorf("line %d: a go block without a marker: mark it <!-- code: FILE --> (an excerpt of FILE, checked) or <!-- sketch: why -->", i+1)
			}
			var text strings.Builder
			closed := false
			for i++; i < len(lines); i++ {
				if strings.TrimSpace(lines[i]) == "```" {
					closed = true
					break
				}
				text.WriteString(strings.TrimPrefix(lines[i], m[1]) + "\n")
			}
			if !closed {
				return nil, nil, fmt.Errorf("line %d: unterminated go block", pending.Line)
			}
			pending.Text = text.String()
			blocks = append(blocks, *pending)
			pending = nil
			continue
		}
		if pending != nil {
			return nil, nil, fmt.Errorf("line %d: marker must be directly above its go block, not above %q", pending.Line, l)
		}
	}
	if pending != nil {
		return nil, nil, fmt.Errorf("line %d: marker has no go block", pending.Line)
	}
	if inList {
		return nil, nil, fmt.Errorf("the reading list has no <!-- /read-the-code -->")
	}
	// The names are those between the link and the first ": ", on the
	// item's first line or the lines it wraps onto.
	for i, h := range heads {
		h, _, _ = strings.Cut(h, ": ")
		for _, n := range readNameRe.FindAllStringSubmatch(h, -1) {
			items[i].Names = append(items[i].Names, n[1])
		}
	}
	return blocks, items, nil
}

// excerptOf reports whether block's lines appear in src as consecutive lines,
// leading whitespace aside; a "// ..." line of block skips any lines of src.
func excerptOf(block, src string) error {
	norm := func(s string) []string {
		ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i, l := range ls {
			ls[i] = strings.TrimRight(strings.TrimLeft(l, " \t"), " \t")
		}
		return ls
	}
	file := norm(src)
	var runs [][]string
	var run []string
	for _, l := range norm(block) {
		if l == "// ..." {
			runs = append(runs, run)
			run = nil
			continue
		}
		run = append(run, l)
	}
	runs = append(runs, run)
	at := 0
	for _, r := range runs {
		if len(r) == 0 {
			continue
		}
		found := -1
		for i := at; i+len(r) <= len(file); i++ {
			if equalLines(file[i:i+len(r)], r) {
				found = i
				break
			}
		}
		if found < 0 {
			return fmt.Errorf("these lines are not in it, one after another (after what the block shows before them):\n%s", strings.Join(r, "\n"))
		}
		at = found + len(r)
	}
	return nil
}

func equalLines(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// declared returns the names a Go file declares at its top level: functions,
// methods as Type.Method, types, vars and consts.
func declared(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			names[funcName(d)] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	return names, nil
}

// checkCode holds a README's Go blocks to their files and its reading list
// to the files and names it gives; dir is the lecture's folder.
func checkCode(t testing.TB, dir, readme string) ([]CodeBlock, []ReadItem) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, readme))
	if err != nil {
		t.Fatal(err)
	}
	blocks, items, err := parseCode(string(b))
	if err != nil {
		t.Fatalf("%s: %v", readme, err)
	}
	for _, c := range blocks {
		if c.File == "" {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, c.File))
		if err != nil {
			t.Errorf("%s:%d: the go block's file: %v", readme, c.Line, err)
			continue
		}
		if err := excerptOf(c.Text, string(src)); err != nil {
			t.Errorf("%s:%d: the go block no longer matches %s (copy the lines again): %v", readme, c.Line, c.File, err)
		}
	}
	for _, it := range items {
		names, err := declared(filepath.Join(dir, it.File))
		if err != nil {
			t.Errorf("%s:%d: the reading list's file: %v", readme, it.Line, err)
			continue
		}
		for _, n := range it.Names {
			if !names[n] {
				t.Errorf("%s:%d: %s declares no %s (the reading list names it)", readme, it.Line, it.File, n)
			}
		}
	}
	return blocks, items
}

// checkLectureCode holds both READMEs' Go blocks and reading lists to the
// source, and to each other: the same excerpts and the same list, in the same
// order (a sketch's text may differ: its comments are in the README's
// language). Each README has a reading list.
func checkLectureCode(t testing.TB) {
	t.Helper()
	ruBlocks, ruItems := checkCode(t, ".", "README.md")
	enBlocks, enItems := checkCode(t, ".", "README.en.md")
	if len(ruItems) == 0 {
		t.Errorf("README.md has no reading list (<!-- read-the-code --> ... <!-- /read-the-code -->): the files a student opens, first the lesson")
	}
	if fmt.Sprint(strip(ruBlocks)) != fmt.Sprint(strip(enBlocks)) {
		t.Errorf("README.md and README.en.md show different go blocks:\n%v\n---\n%v", strip(ruBlocks), strip(enBlocks))
	}
	if fmt.Sprint(stripItems(ruItems)) != fmt.Sprint(stripItems(enItems)) {
		t.Errorf("README.md and README.en.md give different reading lists:\n%v\n---\n%v", stripItems(ruItems), stripItems(enItems))
	}
	checkLessonShape(t, ".", ruItems)
}

func strip(bs []CodeBlock) []CodeBlock {
	out := make([]CodeBlock, len(bs))
	for i, b := range bs {
		out[i] = CodeBlock{File: b.File, Text: b.Text}
		if b.File == "" {
			out[i].Text = "" // a sketch's comments may be in the README's language
		}
	}
	return out
}

func stripItems(is []ReadItem) []ReadItem {
	out := make([]ReadItem, len(is))
	for i, it := range is {
		out[i] = ReadItem{File: it.File, Names: it.Names}
	}
	return out
}
