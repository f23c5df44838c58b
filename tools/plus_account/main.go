// Command plus_account is PluS's plus_account (seed 002 §2.3): see package
// gopbs/tools/internal/plus, function Account.
package main

import "gopbs/tools/internal/plus"

func main() { plus.Main(plus.Account) }
