// Command plus_reserve is PluS's plus_reserve (seed 002 §2.3): see package
// gopbs/tools/internal/plus, function Reserve.
package main

import "gopbs/tools/internal/plus"

func main() { plus.Main(plus.Reserve) }
