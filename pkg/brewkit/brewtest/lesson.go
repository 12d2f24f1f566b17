package brewtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A lecture is read as much as it is run: each program has a lesson file a
// student opens first, its Kafka calls top to bottom, and the harness that
// proves a claim (measurement, samples, child processes, verification,
// printing) lives apart. checkLessonShape holds a lecture's code to it:
//
//   - no function is over MaxFuncLines lines;
//   - a harness file, one whose comments say "This file is the harness",
//     makes no produce, consume, commit, pause, resume or admin call of
//     franz-go (by the method's name: KafkaCalls);
//   - no file of the README's reading list is a harness file.

// MaxFuncLines is how long a function of lecture code may be, its
// signature and closing brace included: about a screen.
const MaxFuncLines = 80

// KafkaCalls are the franz-go client methods a lesson makes (kgo's produce,
// consume, commit, pause, resume and transactions; kadm's admin requests;
// a kmsg request's RequestWith). A harness file calls none of them.
var KafkaCalls = strings.Fields(`Produce ProduceSync TryProduce PollFetches PollRecords
	CommitRecords CommitOffsets CommitOffsetsSync CommitUncommittedOffsets CommitMarkedOffsets
	MarkCommitRecords PauseFetchPartitions ResumeFetchPartitions BeginTransaction EndTransaction
	EndAndBeginTransaction AlterPartitionAssignments AlterTopicConfigs AlterClientQuotas
	AlterUserSCRAMs AlterBrokerConfigs CreateACLs CreatePartitions CreateTopic CreateTopics
	DeleteACLs DeleteGroup DeleteGroups DeleteRecords DeleteTopic DeleteTopics DescribeACLs
	DescribeClientQuotas DescribeConsumerGroups DescribeGroups DescribeProducers
	DescribeShareGroups DescribeShareGroupOffsets DescribeTopicConfigs DescribeBrokerConfigs
	DescribeTransactions DescribeUserSCRAMs ElectLeaders FetchOffsets ListEndOffsets
	ListStartOffsets ListTopics ListGroups ListPartitionReassignments ListTransactions
	ListCommittedOffsets UpdatePartitions RequestWith`)

const harnessMark = "This file is the harness"

// goFile is one non-test Go file of a lecture, parsed.
type goFile struct {
	rel  string // relative to the lecture's folder, with slashes
	fset *token.FileSet
	file *ast.File
}

func lectureFiles(dir string) ([]goFile, error) {
	var out []goFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, goFile{rel: filepath.ToSlash(rel), fset: fset, file: f})
		return nil
	})
	return out, err
}

// funcName is a declaration's name, a method's as Type.Name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// longFuncs lists f's functions over MaxFuncLines as "rel Name" with their
// lengths.
func (f goFile) longFuncs() map[string]int {
	out := map[string]int{}
	for _, d := range f.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if n := f.fset.Position(fd.End()).Line - f.fset.Position(fd.Pos()).Line + 1; n > MaxFuncLines {
			out[f.rel+" "+funcName(fd)] = n
		}
	}
	return out
}

func (f goFile) harness() bool {
	for _, g := range f.file.Comments {
		if strings.Contains(g.Text(), harnessMark) {
			return true
		}
	}
	return false
}

// kafkaCalls lists f's calls of KafkaCalls, as "line: Name".
func (f goFile) kafkaCalls() []string {
	var out []string
	ast.Inspect(f.file, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if s, ok := c.Fun.(*ast.SelectorExpr); ok && slices.Contains(KafkaCalls, s.Sel.Name) {
			out = append(out, fmt.Sprintf("%d: %s", f.fset.Position(c.Pos()).Line, s.Sel.Name))
		}
		return true
	})
	return out
}

// checkLessonShape is the check above for the lecture in dir, with items
// the README's reading list.
func checkLessonShape(t testing.TB, dir string, items []ReadItem) {
	t.Helper()
	files, err := lectureFiles(dir)
	if err != nil {
		t.Fatalf("reading the lecture's Go files: %v", err)
	}
	harness := map[string]bool{}
	for _, f := range files {
		for key, n := range f.longFuncs() {
			t.Errorf("%s is %d lines: at most %d, so that it reads on a screen, top to bottom (its Kafka calls in the lesson file, the harness apart)", key, n, MaxFuncLines)
		}
		if f.harness() {
			harness[f.rel] = true
			if calls := f.kafkaCalls(); len(calls) > 0 {
				t.Errorf("%s says it is the harness, and calls franz-go (%s): a lesson's Kafka calls are in its lesson file", f.rel, strings.Join(calls, ", "))
			}
		}
	}
	for _, it := range items {
		if harness[it.File] {
			t.Errorf("the reading list names %s, which says it is the harness: list the lesson file", it.File)
		}
	}
}
