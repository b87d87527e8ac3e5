# tests/e2e/test_report.sh - `vpaudit report` on the golden results file
# (tests/golden/reports/results.json: 4 figures, 3 gates of which 2 fail,
# status "fail", a simulated target).  Run from the repository top.
. tests/e2e/lib.sh
G=$PWD/tests/golden/reports/results.json
has() { grep -q -- "$2" "$1"; }
n_svg() { grep -o '<svg' "$1" | wc -l; }

# 1. Re-render into another folder: every file, results.json copied verbatim.
t_run "report -o DIR on the golden sample exits 3 (its gates failed)" 3 -- report "$G" -o "$T/out"
t_ok "no output on stdout" test ! -s "$OUT"
for f in results.json report.html report.pdf junit.xml; do
	t_ok "$f written" test -s "$T/out/$f"
done
t_ok "no temporaries left" test -z "$(ls "$T/out" | grep tmp)"
t_ok "results.json copied verbatim" cmp -s "$G" "$T/out/results.json"
figs=$(grep -c '"type": "\(det\|linkability\|lines\|bars\)"' "$G")
t_ok "the sample has 4 figures" test "$figs" = 4
t_ok "report.html has one <svg per figure" test "$(n_svg "$T/out/report.html")" = "$figs"
# issue 25 item 4h: gnuplot's SVG terminal drew an opaque key twice, so every
# plot's group ids appeared twice in the HTML
t_ok "report.html: every id once" test -z "$(grep -o ' id="[^"]*"' "$T/out/report.html" | sort | uniq -d)"
t_ok "report.html is self-contained" sh -c "! grep -q -e '<script' -e 'src=' -e '<link' -e '@import' '$T/out/report.html'"
t_ok "report.html names the simulated target" has "$T/out/report.html" '<strong>SIMULATED</strong> &mdash;.*sim&lt;1&gt;'
t_ok "report.html summary shows the failed gate" has "$T/out/report.html" '<tr class="fail"><td>eval.lazy_informed</td><td>linkability</td>'
# the sections a reader expects, with their stable ids, each filled from the results
for id in summary threat-model results glossary limitations data recommendations; do
	t_ok "report.html has section #$id" has "$T/out/report.html" "<section class=\"sec\" id=\"$id\">"
	t_ok "report.html contents link to #$id" has "$T/out/report.html" "<li><a href=\"#$id\">"
done
t_ok "summary: the verdict in words" has "$T/out/report.html" 'FAIL: 2 of 3 gates failed'
t_ok "summary: the failed gate said in a sentence" has "$T/out/report.html" 'This FAILS the gate eval.lazy_informed linkability &lt;= 0.1 (value 0.42)'
t_ok "summary: the simulated target said in words" has "$T/out/report.html" 'The target sim&lt;1&gt; is SIMULATED'
t_ok "summary: a sentence with the numbers" has "$T/out/report.html" 'decides correctly whether two recordings are of the same speaker 92.0% of the time (EER 8.0%, 95% CI 6.0-10.0%); chance is 50%'
t_ok "limitations: the warnings of the run" has "$T/out/report.html" '3 duplicate trials &lt;ignored&gt;'
t_ok "pdfinfo reads report.pdf" sh -c "pdfinfo '$T/out/report.pdf' > '$T/pdfinfo'"
t_ok "report.pdf: Title is the scenario name" has "$T/pdfinfo" '^Title: *golden-report$'
t_ok "report.pdf: Author vpaudit" has "$T/pdfinfo" '^Author: *vpaudit$'
t_ok "report.pdf: Creator vpaudit and version" has "$T/pdfinfo" '^Creator: *vpaudit [0-9]'
t_ok "report.pdf: A4" has "$T/pdfinfo" '^Page size: *595.276 x 841.89 pts (A4)'
pages=$(sed -n 's/^Pages: *//p' "$T/pdfinfo")
t_ok "report.pdf has at least 9 pages (title, contents, 7 sections)" test "${pages:-0}" -ge 9
pdftotext -layout "$T/out/report.pdf" "$T/pdf.txt" 2>/dev/null
t_ok "pdftotext finds the scenario name" has "$T/pdf.txt" 'golden-report'
t_ok "pdftotext finds the verdict on the title page" sh -c "pdftotext -f 1 -l 1 '$T/out/report.pdf' - | grep -q 'FAIL: 2 of 3 gates failed'"
n_numbered=0
for k in $(seq 1 "${pages:-0}"); do
	pdftotext -f "$k" -l "$k" "$T/out/report.pdf" - 2>/dev/null | grep -q "page $k of $pages" && n_numbered=$((n_numbered + 1))
done
t_ok "report.pdf: 'page k of n' on every page" test "$n_numbered" = "${pages:-x}"
t_ok "pdftotext finds the failing gate line" has "$T/pdf.txt" 'eval.lazy_informed *linkability *worst *0.42 *<= 0.1 *FAIL'
t_ok "pdftotext finds the passing gate line" has "$T/pdf.txt" 'eval.ignorant *eer *worst *30.00% *>= 30.00% *PASS'
t_ok "pdftotext finds a metrics table" has "$T/pdf.txt" 'lazy_informed .*8.00% *\[6.00%, 10.00%\]'
if command -v mutool > /dev/null 2>&1; then
	mutool show "$T/out/report.pdf" outline > "$T/outline" 2>/dev/null
	for sec in 'Executive summary' 'Threat model' 'Results per attack' 'Limitations' 'Recommendations' 'Glossary' 'Data and provenance'; do
		t_ok "outline: $sec" has "$T/outline" "\"$sec\""
	done
	t_ok "outline: one entry per attack (eval)" has "$T/outline" '"eval (evaluate)"'
	t_ok "outline: one entry per attack (layers)" has "$T/outline" '"layers'
	t_ok "outline: attacks under Results" test "$(grep -c '^|		"' "$T/outline")" -ge 2
else
	echo "# skip - PDF outline: mutool (mupdf-tools) is not installed; not counted as passed"
fi
t_ok "junit.xml: 3 tests, 2 failures" has "$T/out/junit.xml" '<testsuite name="golden-report" tests="3" failures="2"'
t_ok "junit.xml: the failure quotes metric, value and bound" \
	has "$T/out/junit.xml" '<failure type="gate" message="linkability = 0.42, bound &lt;= 0.1">'
t_ok "junit.xml: an undefined metric is a failure" has "$T/out/junit.xml" 'message="accuracy = undefined, bound &lt;= 0.6"'
t_ok "junit.xml is well-formed enough: 2 </failure>" test "$(grep -c '</failure>' "$T/out/junit.xml")" = 2

# 1b. Printed by Chromium (the docs' way to look at the HTML on paper): every
# column header of every table is on the paper (nothing cut at the right edge).
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROME" ] && [ -z "${VPA_SKIP_CHROMIUM:-}" ]; then
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$T/chrome" \
		--no-pdf-header-footer --print-to-pdf="$T/printed.pdf" "file://$T/out/report.html" > /dev/null 2>&1
	t_ok "chromium prints report.html" test -s "$T/printed.pdf"
	# nothing beyond the right edge of any page (Chromium keeps clipped text in the PDF)
	pdftotext -bbox "$T/printed.pdf" "$T/printed.html" 2>/dev/null
	t_ok "chromium print: no word beyond the page's right edge" awk '
		/<page / { match($0, /width="[0-9.]+"/); w = substr($0, RSTART + 7, RLENGTH - 8) + 0 }
		/<word / { match($0, /xMax="[0-9.]+"/); x = substr($0, RSTART + 6, RLENGTH - 7) + 0
			   if (x > w) bad++; n++ }
		END { exit !(n > 0 && bad == 0) }' "$T/printed.html"
	# and every header word of every table is on the paper
	pdftotext "$T/printed.pdf" - 2>/dev/null | tr -d ' \n\t-' > "$T/printed.txt"
	grep -o '<th scope="col">[^<]*</th>' "$T/out/report.html" | sed 's/<th scope="col">//; s/<\/th>//' |
		sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&#39;/'"'"'/g; s/&amp;/\&/g' | tr ' ' '\n' | tr -d '\t-' |
		grep -v '^$' | sort -u > "$T/heads"
	missing=0
	while IFS= read -r h; do
		grep -qF -- "$h" "$T/printed.txt" || { echo "#   header word not printed: $h"; missing=$((missing + 1)); }
	done < "$T/heads"
	t_ok "chromium print keeps every column ($(wc -l < "$T/heads") header words)" test "$missing" = 0 -a -s "$T/heads"
else
	echo "# skip - chromium print check: chromium is not installed (sh .ci/deps installs it); not counted as passed"
fi

# 2. In place (no -o): results.json is not rewritten.
mkdir -p "$T/in" && cp "$G" "$T/in/results.json" && chmod a-w "$T/in/results.json"
t_run "report in place" 3 -- report "$T/in/results.json"
t_ok "in place: the three reports written" test -s "$T/in/report.html" -a -s "$T/in/report.pdf" -a -s "$T/in/junit.xml"
t_ok "in place: results.json untouched" cmp -s "$G" "$T/in/results.json"
t_ok "in place: nothing else" test "$(ls "$T/in" | wc -l)" = 4
# -o naming the same folder another way is still the same folder
t_run "report -o SAME/." 3 -- report "$T/in/results.json" -o "$T/in/."
t_ok "-o SAME: results.json untouched" cmp -s "$G" "$T/in/results.json"

# 3. A passing results file exits 0.
sed 's/"status": "fail"/"status": "pass"/' "$G" > "$T/pass.json"
t_run "status pass exits 0" 0 -- report "$T/pass.json" -o "$T/pass"

# 4. --no-plots: no SVG, no PDF (with a warning), gnuplot not needed.
mkdir -p "$T/empty"
PATH=$T/empty t_run "--no-plots without gnuplot" 3 -- report "$G" -o "$T/np" --no-plots
t_ok "--no-plots: no <svg" test "$(n_svg "$T/np/report.html")" = 0
t_ok "--no-plots: a note instead" has "$T/np/report.html" '2 figures omitted (--no-plots)'
t_ok "--no-plots: no report.pdf" test ! -e "$T/np/report.pdf"
t_ok "--no-plots: the warning says why" has "$ERR" '^vpaudit: warning: report.pdf is not written with --no-plots'

# 5. No gnuplot: one clear error, nothing written.
PATH=$T/empty t_run "no gnuplot on PATH" 1 -- report "$G" -o "$T/nog"
t_ok "no gnuplot: the exact message" test "$(cat "$ERR")" = "vpaudit report: error: gnuplot not found: install gnuplot-nox or run with --no-plots"
t_ok "no gnuplot: no file written" test ! -e "$T/nog/report.html" -a ! -e "$T/nog/junit.xml" -a ! -e "$T/nog/results.json"

# 6. Bad inputs (exact one-line errors).
printf '{"schema": "vpaudit.results/1",\n "scenario": {"name": 3}}\n' > "$T/bad.json"
t_run "scenario name not a string" 1 -- report "$T/bad.json"
t_ok "scenario name: message" test "$(cat "$ERR")" = "vpaudit report: error: $T/bad.json:2:23: scenario: 'name' must be a string"
printf '{"schema": "vpaudit.results/1", "scenario": {"name": "x"}, "attacks": [], "records": [' > "$T/trunc.json"
t_run "truncated JSON" 1 -- report "$T/trunc.json"
t_ok "truncated JSON: one line with line:col" sh -c "test \$(wc -l < '$ERR') = 1 && grep -q '^vpaudit report: error: $T/trunc.json:1:[0-9]*: ' '$ERR'"
t_run "a folder as RESULTS" 1 -- report "$T"
t_ok "a folder: one line" test "$(wc -l < "$ERR")" = 1
touch "$T/file"
t_run "-o names a file" 1 -- report "$G" -o "$T/file" --no-plots
t_ok "-o file: message" has "$ERR" "^vpaudit report: error: $T/file: "
# 7. Texts that begin with a quote or hold runs of quotes, backquotes, % and a
#    newline reach gnuplot safely (issue 20: a description "'B1' anonymiser"
#    was a gnuplot syntax error and the report was not written).
cat > "$T/q.sed" <<'SED'
s/"description": "Hand-written.*",$/"description": "'B1' anonymiser ``x`` ''' 50%",/
s/"title": "DET: eval"/"title": "''DET''''"/
s/"name": "ignorant"/"name": "'ign\\n%s'"/
s/"xlabel": "layer"/"xlabel": "'layer'"/
SED
sed -f "$T/q.sed" "$G" > "$T/quotes.json"
t_ok "the quoted sample has the texts" sh -c "grep -q \"'B1' anonymiser\" '$T/quotes.json' && grep -q \"''DET''''\" '$T/quotes.json'"
t_run "report on texts starting with a quote" 3 -- report "$T/quotes.json" -o "$T/quotes"
t_ok "quotes: report.pdf written" test -s "$T/quotes/report.pdf"
pdftotext -layout "$T/quotes/report.pdf" "$T/quotes.txt" 2>/dev/null
t_ok "quotes: the description reaches the PDF verbatim" has "$T/quotes.txt" "'B1' anonymiser \`\`x\`\` ''' 50%"
t_ok "quotes: the figure title reaches the SVG verbatim" has "$T/quotes/report.html" ">''DET''''<"
t_ok "quotes: the series name reaches the SVG (newline as a space)" has "$T/quotes/report.html" ">'ign %s' (EER "
t_done
