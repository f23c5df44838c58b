// Command plus_modify is PluS's plus_modify (seed 002 §2.3): see package
// gopbs/tools/internal/plus, function Modify.
package main

import "gopbs/tools/internal/plus"

func main() { plus.Main(plus.Modify) }
