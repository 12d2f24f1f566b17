package poison

import "errors"

// The errors brew returns for a ticket it could not make (this file is not
// yours to edit: the grader's brew returns these).
var (
	// ErrJammed: the espresso machine jammed; another try will make the drink.
	ErrJammed = errors.New("the espresso machine jammed")
	// ErrUnknownDrink: the ticket names a drink no shop makes; no try will.
	ErrUnknownDrink = errors.New("no such drink")
)
