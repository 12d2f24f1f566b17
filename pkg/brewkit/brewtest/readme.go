package brewtest

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// A lecture README shows what its programs print in fenced text blocks, each
// right below a marker that names it and declares what may differ in a run:
//
//	<!-- output: quorum-status; vary: RaftLeader:, ROLE -->
//
// Everything else is compared literally, every number included. An item of
// vary is one of:
//
//   - a column header of the block's table (ROLE, LAG, "MAX LAG"): the field in
//     that column, in every row of the table, may be anything; COLUMN@first
//     limits it to the rows whose first field, as the README writes it, is
//     first (DUPLICATED@off), and is used there before an item for every row;
//   - a label (RaftLeader:, records=, after, ->): the number or the list of
//     numbers ([1 2]) right after it on a line may be any;
//   - either, with a range the lesson depends on: "LAG 0..2000", "lost 0..0";
//   - a kind of word that differs in every run: names (brew.… topic and group
//     names, chosen fresh), durations (1.5s, 198ms), clock (15:04:05.000),
//     lists ([0 60 121], lists of numbers of any length),
//     stand ("the native stand": whichever of the three stands is up),
//     endpoints (CONTROLLER://127.0.0.1:39092: a listener's host and port, which
//     differ between the native and the docker stand).
//
// Runs of spaces match any run of spaces, since columns widen with their values.
// "; excerpt" declares that the block shows some lines of a longer output:
// each line must appear, in order, with any lines between them.
//
// A block that shows no program's output (a diagram) is marked
// <!-- not-output: why -->. checkReadme holds a README to these rules.

// Block is one marked text block of a README.
type Block struct {
	Name    string
	Text    string // the block's lines, each ending in \n
	Vary    []string
	Excerpt bool
	Line    int // the marker's line number
}

var (
	markerRe    = regexp.MustCompile(`^\s*<!-- (output|not-output): ?(.*?) -->\s*$`)
	textFenceRe = regexp.MustCompile("^(\\s*)```text\\s*$")
)

// readmeBlocks parses every marked block of the README at path. It fails the
// test on a marker not followed directly by a text block, and on a text block
// without a marker.
func readmeBlocks(t testing.TB, path string) []Block {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(string(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return blocks
}

func parseBlocks(readme string) ([]Block, error) {
	lines := strings.Split(readme, "\n")
	var blocks []Block
	var pending *Block // a marker waiting for its block
	pendingOutput := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := markerRe.FindStringSubmatch(l); m != nil {
			if pending != nil {
				return nil, fmt.Errorf("line %d: marker %q is not followed by its text block", pending.Line, pending.Name)
			}
			pending, pendingOutput = &Block{Line: i + 1}, m[1] == "output"
			if pendingOutput {
				if err := parseMarker(m[2], pending); err != nil {
					return nil, fmt.Errorf("line %d: %v", i+1, err)
				}
			} else if strings.TrimSpace(m[2]) == "" {
				return nil, fmt.Errorf("line %d: not-output needs a reason", i+1)
			}
			continue
		}
		if m := textFenceRe.FindStringSubmatch(l); m != nil {
			if pending == nil {
				return nil, fmt.Errorf("line %d: a text block without a marker: mark it <!-- output: NAME --> (checked against a run) or <!-- not-output: why -->", i+1)
			}
			indent := m[1]
			var text strings.Builder
			closed := false
			for i++; i < len(lines); i++ {
				if strings.TrimSpace(lines[i]) == "```" {
					closed = true
					break
				}
				text.WriteString(strings.TrimPrefix(lines[i], indent) + "\n")
			}
			if !closed {
				return nil, fmt.Errorf("line %d: unterminated text block", pending.Line)
			}
			if pendingOutput {
				pending.Text = text.String()
				blocks = append(blocks, *pending)
			}
			pending = nil
			continue
		}
		if pending != nil {
			return nil, fmt.Errorf("line %d: marker %q must be directly above its text block, not above %q", pending.Line, pending.Name, l)
		}
	}
	if pending != nil {
		return nil, fmt.Errorf("line %d: marker %q has no text block", pending.Line, pending.Name)
	}
	seen := map[string]bool{}
	for _, b := range blocks {
		if seen[b.Name] {
			return nil, fmt.Errorf("line %d: a second block named %q", b.Line, b.Name)
		}
		seen[b.Name] = true
	}
	return blocks, nil
}

func parseMarker(s string, b *Block) error {
	parts := strings.Split(s, ";")
	b.Name = strings.TrimSpace(parts[0])
	if b.Name == "" || strings.ContainsAny(b.Name, " \t") {
		return fmt.Errorf("output marker needs one name: %q", s)
	}
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		switch {
		case p == "excerpt":
			b.Excerpt = true
		case strings.HasPrefix(p, "vary:"):
			for _, item := range strings.Split(strings.TrimPrefix(p, "vary:"), ",") {
				if item = strings.TrimSpace(item); item != "" {
					b.Vary = append(b.Vary, item)
				}
			}
		default:
			return fmt.Errorf("unknown clause %q in marker %q: use vary: or excerpt", p, b.Name)
		}
	}
	return nil
}

// ReadmeBlock returns the block of that name from the README at path.
func ReadmeBlock(t testing.TB, path, name string) Block {
	t.Helper()
	for _, b := range readmeBlocks(t, path) {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("%s has no <!-- output: %s --> block", path, name)
	return Block{}
}

// MatchesReadme fails the test unless got is what the README's block of that
// name shows, up to what its marker declares may vary.
func MatchesReadme(t testing.TB, readme, name, got string) {
	t.Helper()
	RequireName(t, Readme, "compares output with a README")
	b := ReadmeBlock(t, readme, name)
	got = contractPorts(t, got)
	if err := b.match(got); err != nil {
		t.Fatalf("output differs from README block %q: %v\n--- README (vary: %s):\n%s--- got:\n%s", name, err, strings.Join(b.Vary, ", "), b.Text, got)
	}
}

// match reports how got differs from the block, or nil.
func (b Block) match(got string) error {
	kinds, items := splitKinds(b.Vary)
	want := b.Text
	for _, k := range kinds {
		want, got = k(want), k(got)
	}
	wantLines := strings.Split(strings.TrimRight(want, "\n"), "\n")
	gotLines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	// Columns are found on the block as written: a name blanked to NAME is
	// shorter than the name, and would shift the fields after it.
	origLines := strings.Split(strings.TrimRight(b.Text, "\n"), "\n")
	pats, err := linePatterns(wantLines, origLines, items)
	if err != nil {
		return err
	}
	if b.Excerpt {
		j := 0
		for i, p := range pats {
			for j < len(gotLines) && p.match(gotLines[j]) != nil {
				j++
			}
			if j == len(gotLines) {
				return fmt.Errorf("README line %d %q: no such line (in this order) in the output", i+1, wantLines[i])
			}
			j++
		}
		return nil
	}
	if len(gotLines) != len(pats) {
		return fmt.Errorf("%d lines, the README shows %d", len(gotLines), len(pats))
	}
	for i, p := range pats {
		if err := p.match(gotLines[i]); err != nil {
			return fmt.Errorf("line %d: %v\n  README: %q\n  got:    %q", i+1, err, wantLines[i], gotLines[i])
		}
	}
	return nil
}

// The kinds of words that vary in every run.
var kinds = map[string]func(string) string{
	"names":     blankNames,
	"durations": blankDurations,
	"clock":     func(s string) string { return clockRe.ReplaceAllString(s, "CLOCK") },
	"lists":     func(s string) string { return listRe.ReplaceAllString(s, "[LIST]") },
	"stand":     func(s string) string { return standRe.ReplaceAllString(s, "the STAND stand") },
	"endpoints": func(s string) string { return endpointRe.ReplaceAllString(s, "${1}://HOST:PORT") },
}

var (
	clockRe = regexp.MustCompile(`\b\d\d:\d\d:\d\d(\.\d+)?\b`)
	listRe  = regexp.MustCompile(`\[[\d ]*\]`)
	standRe = regexp.MustCompile(`\bthe (native|docker|embedded) stand\b`)
	// A listener's endpoint: 127.0.0.1:39092 on the native stand, kafka-1:9093 on docker.
	endpointRe = regexp.MustCompile(`\b([A-Z_]+)://[\w.-]+:\d+`)
)

func splitKinds(vary []string) (ks []func(string) string, items []varyItem) {
	for _, v := range vary {
		if k, ok := kinds[v]; ok {
			ks = append(ks, k)
			continue
		}
		items = append(items, parseItem(v))
	}
	return ks, items
}

type varyItem struct {
	name         string // as declared: a label, a column, or COLUMN@row
	ranged       bool
	lo, hi       float64
	rangeLiteral string
}

// column is the item's column name: COLUMN of COLUMN@row.
func (it varyItem) column() string { c, _, _ := strings.Cut(it.name, "@"); return c }

// row is the first field of the rows COLUMN@row applies to; "" for all rows.
func (it varyItem) row() string { _, r, _ := strings.Cut(it.name, "@"); return r }

var rangeRe = regexp.MustCompile(`^(.*\S)\s+(\d+(?:\.\d+)?)\.\.(\d+(?:\.\d+)?)$`)

func parseItem(s string) varyItem {
	if m := rangeRe.FindStringSubmatch(s); m != nil {
		lo, _ := strconv.ParseFloat(m[2], 64)
		hi, _ := strconv.ParseFloat(m[3], 64)
		return varyItem{name: m[1], ranged: true, lo: lo, hi: hi, rangeLiteral: m[2] + ".." + m[3]}
	}
	return varyItem{name: s}
}

// linePattern is one README line as a pattern, with the ranges its captured
// numbers must fall in.
type linePattern struct {
	re     *regexp.Regexp
	ranges []varyItem // one per capture group; unranged items accept anything
}

func (p linePattern) match(got string) error {
	m := p.re.FindStringSubmatch(got)
	if m == nil {
		return fmt.Errorf("does not match")
	}
	for i, it := range p.ranges {
		if !it.ranged {
			continue
		}
		v, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil || v < it.lo || v > it.hi {
			return fmt.Errorf("%s is %q, outside %s", it.name, m[i+1], it.rangeLiteral)
		}
	}
	return nil
}

var (
	fieldSep    = regexp.MustCompile(` {2,}`)
	tokenRe     = regexp.MustCompile(`\[[\d ]*\]|\d+(?:\.\d+)?| +|[^\d \[]+|\[`)
	numberRe    = regexp.MustCompile(`^\d+(?:\.\d+)?$`)
	listTokenRe = regexp.MustCompile(`^\[[\d ]*\]$`)
)

const anyNumber = `(\d+(?:\.\d+)?)`

// linePatterns turns the README lines into patterns. A table starts at a
// header line that names a varying column and runs to the next blank line;
// its rows' fields are placed in columns by where they start.
func linePatterns(lines, orig []string, items []varyItem) ([]linePattern, error) {
	used := map[string]bool{}
	var pats []linePattern
	var header []column
	for i, l := range lines {
		o := l // the line as written, for the columns' positions
		if i < len(orig) {
			o = orig[i]
		}
		isHead := false
		if strings.TrimSpace(l) == "" {
			header = nil
		} else if h := headerColumns(o, items, used); h != nil {
			header, isHead = h, true
		}
		var p linePattern
		var b strings.Builder
		b.WriteString("^")
		if header != nil && !isHead {
			writeRow(&b, &p, l, o, header, items, used)
		} else {
			writeTokens(&b, &p, l, items, used)
		}
		b.WriteString("$")
		re, err := regexp.Compile(b.String())
		if err != nil {
			return nil, err
		}
		p.re = re
		pats = append(pats, p)
	}
	for _, it := range items {
		if !used[it.name] {
			return nil, fmt.Errorf("vary item %q matches no column and no label in the block", it.name)
		}
	}
	return pats, nil
}

type column struct {
	name   string
	start  int         // rune offset
	varies []*varyItem // the items naming this column, each for all rows or one
}

// vary returns the item that makes this column vary in a row whose first
// field is first, or nil: the item for that row (COLUMN@first) before the
// one for every row (COLUMN), so a row can hold a narrower range.
func (c column) vary(first string) *varyItem {
	var all *varyItem
	for _, it := range c.varies {
		switch it.row() {
		case first:
			return it
		case "":
			if all == nil {
				all = it
			}
		}
	}
	return all
}

// headerColumns returns the columns of l when it is a table header that
// names a varying column, else nil.
func headerColumns(l string, items []varyItem, used map[string]bool) []column {
	var cols []column
	varies := false
	for _, f := range fields(l) {
		c := column{name: f.text, start: f.start}
		for i := range items {
			if items[i].column() == f.text {
				c.varies = append(c.varies, &items[i])
				used[items[i].name] = true
				varies = true
			}
		}
		cols = append(cols, c)
	}
	if !varies || len(cols) < 2 || !headerLike(l) {
		return nil
	}
	return cols
}

// headerLike reports whether a line can be a table header: no field of it is
// a bare number ("RaftLeader:  3" is a label and its value).
func headerLike(l string) bool {
	for _, f := range fields(l) {
		if numberRe.MatchString(strings.TrimSpace(f.text)) {
			return false
		}
	}
	return true
}

type field struct {
	text  string
	start int // rune offset in the line
}

// fields splits a line at runs of two or more spaces.
func fields(l string) []field {
	var fs []field
	pos := 0
	for _, loc := range append(fieldSep.FindAllStringIndex(l, -1), []int{len(l), len(l)}) {
		if loc[0] > pos {
			fs = append(fs, field{text: l[pos:loc[0]], start: utf8.RuneCountInString(l[:pos])})
		}
		pos = loc[1]
	}
	return fs
}

func writeRow(b *strings.Builder, p *linePattern, l, orig string, cols []column, items []varyItem, used map[string]bool) {
	if lead := len(l) - len(strings.TrimLeft(l, " ")); lead > 0 {
		b.WriteString(" +")
	}
	fs := fields(l)
	ofs := fields(orig)
	for i, f := range fs {
		if i > 0 {
			b.WriteString(" +")
		}
		start := f.start
		if len(ofs) == len(fs) {
			start = ofs[i].start // where the field stands in the block as written
		}
		var col column
		for _, c := range cols {
			if c.start <= start {
				col = c
			}
		}
		// A row is named by its first field as the README writes it (a
		// brew.… name stays itself, though "names" blanks it to match).
		first := fs[0].text
		if len(ofs) == len(fs) {
			first = strings.TrimSpace(ofs[0].text)
		}
		it := col.vary(first)
		switch {
		case it == nil:
			writeTokens(b, p, f.text, items, used)
		case it.ranged:
			b.WriteString(anyNumber)
			p.ranges = append(p.ranges, *it)
		default:
			b.WriteString("(.+?)")
			p.ranges = append(p.ranges, *it)
		}
	}
}

// writeTokens writes text token by token: numbers after a varying label match
// any number, runs of spaces any run of spaces, the rest itself.
func writeTokens(b *strings.Builder, p *linePattern, text string, items []varyItem, used map[string]bool) {
	before := ""
	for _, tok := range tokenRe.FindAllString(text, -1) {
		switch {
		case tok[0] == ' ':
			b.WriteString(" +")
		case listTokenRe.MatchString(tok):
			// A list of numbers ([1 2 3]) is one value: after a varying
			// label any list matches, else it is literal, spaces included.
			if it := labelFor(strings.TrimRight(before, " "), items); it != nil {
				used[it.name] = true
				b.WriteString(`(\[[\d ]*\])`)
				p.ranges = append(p.ranges, varyItem{name: it.name})
			} else {
				b.WriteString(regexp.QuoteMeta(tok))
			}
		case numberRe.MatchString(tok):
			if it := labelFor(strings.TrimRight(before, " "), items); it != nil {
				used[it.name] = true
				b.WriteString(anyNumber)
				p.ranges = append(p.ranges, *it)
			} else {
				b.WriteString(regexp.QuoteMeta(tok))
			}
		default:
			b.WriteString(regexp.QuoteMeta(tok))
		}
		before += tok
	}
}

func labelFor(before string, items []varyItem) *varyItem {
	for i, it := range items {
		rest, ok := strings.CutSuffix(before, it.name)
		if !ok {
			continue
		}
		// A label that starts with a letter must start a word there: "after"
		// does not match "thereafter".
		first, _ := utf8.DecodeRuneInString(it.name)
		last, _ := utf8.DecodeLastRuneInString(rest)
		if rest == "" || !isLetter(first) || !isLetter(last) {
			return &items[i]
		}
	}
	return nil
}

func isLetter(r rune) bool {
	return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

// mutations returns the block's text with one number changed, once for each
// number that no vary item can cover, by a rule simpler than the matcher's
// own: the number's line is not changed by a kind the block declares (names,
// durations, ...), no vary item appears before the number on its line, and it
// is not in a table (from a header naming a vary item to the next blank
// line). checkReadme asserts that the block matches none of them.
func (b Block) mutations() []string {
	var out []string
	kindsOf, items := splitKinds(b.Vary)
	lines := strings.Split(strings.TrimRight(b.Text, "\n"), "\n")
	inTable := false
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			inTable = false
		case namesColumn(l, items):
			inTable = true
		}
		norm := l
		for _, k := range kindsOf {
			norm = k(norm)
		}
		if norm != l || inTable {
			continue
		}
		for _, loc := range regexp.MustCompile(`\d+`).FindAllStringIndex(l, -1) {
			if mentionsItem(l[:loc[0]], items) {
				continue
			}
			n, _ := strconv.Atoi(l[loc[0]:loc[1]])
			changed := append([]string(nil), lines...)
			changed[i] = l[:loc[0]] + strconv.Itoa(n+1) + l[loc[1]:]
			out = append(out, strings.Join(changed, "\n")+"\n")
		}
	}
	return out
}

func mentionsItem(s string, items []varyItem) bool {
	for _, it := range items {
		if strings.Contains(s, it.name) {
			return true
		}
	}
	return false
}

func namesColumn(head string, items []varyItem) bool {
	if !headerLike(head) {
		return false
	}
	for _, f := range fields(head) {
		for _, it := range items {
			if f.text == it.column() {
				return true
			}
		}
	}
	return false
}

// checkReadme holds a README's marked blocks to the rules: every text block
// is marked, each marker sits right above its block, each block matches
// itself under its own vary clause, and changing any number the block does not
// declare to vary makes it fail.
func checkReadme(t *testing.T, path string) []Block {
	t.Helper()
	blocks := readmeBlocks(t, path)
	for _, b := range blocks {
		if err := b.match(b.Text); err != nil {
			t.Errorf("%s: block %q does not match itself: %v", path, b.Name, err)
			continue
		}
		for _, m := range b.mutations() {
			if b.match(m) == nil {
				t.Errorf("%s: block %q still matches with a number changed:\n%s", path, b.Name, m)
			}
		}
	}
	return blocks
}

// translationAgrees fails the test unless the translation (README.en.md) has
// the same marked blocks, markers and text, as the README, which the lecture's
// tests hold the programs to.
func translationAgrees(t testing.TB, readme, translation string) {
	t.Helper()
	want := readmeBlocks(t, readme)
	got := readmeBlocks(t, translation)
	if len(got) != len(want) {
		t.Fatalf("%s has %d marked blocks, %s has %d", translation, len(got), readme, len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		w.Line, g.Line = 0, 0
		if fmt.Sprint(w) != fmt.Sprint(g) {
			t.Errorf("block %d differs between %s and %s:\n%+v\n---\n%+v", i+1, translation, readme, g, w)
		}
	}
}
