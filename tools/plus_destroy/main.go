// Command plus_destroy is PluS's plus_destroy (seed 002 §2.3): see package
// gopbs/tools/internal/plus, function Destroy.
package main

import "gopbs/tools/internal/plus"

func main() { plus.Main(plus.Destroy) }
