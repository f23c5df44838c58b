// Command plus_abort is PluS's plus_abort (seed 002 §2.3): see package
// gopbs/tools/internal/plus, function Abort.
package main

import "gopbs/tools/internal/plus"

func main() { plus.Main(plus.Abort) }
