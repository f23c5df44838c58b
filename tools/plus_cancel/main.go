// Command plus_cancel is PluS's plus_cancel (seed 002 §2.3): see package
// gopbs/tools/internal/plus, function Cancel.
package main

import "gopbs/tools/internal/plus"

func main() { plus.Main(plus.Cancel) }
