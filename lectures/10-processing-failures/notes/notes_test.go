package notes_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/10-processing-failures/notes"
)

func TestPipedNotesWaitForSuccessAndProgressIsLeftOut(t *testing.T) {
	var b bytes.Buffer
	n := notes.To(&b, false)
	n.Note("partner: started one in this process")
	n.Progress("1s  booked 3")
	require.Empty(t, b.String(), "a failing run says one line, its failure")
	n.Done()
	require.Equal(t, "partner: started one in this process\n", b.String())
	n.Done()
	require.Equal(t, "partner: started one in this process\n", b.String(), "a note is printed once")
}

func TestTerminalNotesComeAsTheyCome(t *testing.T) {
	var b bytes.Buffer
	n := notes.To(&b, true)
	n.Note("partner: started one in this process")
	n.Progress("1s  booked 3")
	require.Equal(t, "partner: started one in this process\n1s  booked 3\n", b.String())
	n.Done()
	require.Equal(t, "partner: started one in this process\n1s  booked 3\n", b.String())
}
