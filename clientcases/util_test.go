package clientcases_test

import "strings"

type stringsBuilder = strings.Builder
