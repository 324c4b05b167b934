package html

// CheckPage is checkPage, for the external tests (golden files, fuzzing).
var CheckPage = checkPage
