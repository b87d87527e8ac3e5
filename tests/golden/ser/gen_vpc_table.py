#!/usr/bin/python3
"""tests/golden/ser/gen_vpc_table.py - the "---- SER results ----" tables that
tests/unit/test_vpc_utility.c (ser_expect) and tests/e2e/test_utility_gates.sh
(ser_rows) expect, printed by pandas itself: VoicePAT's evaluate_ser.py frame
(one row per test set and fold) through its groupby(['dataset', 'split',
'ser']).agg({'UAR': ['mean'], 'ACC_*': ['mean']}).reset_index() and
run_evaluation.py's sort_values(by=['dataset', 'split']).to_string().

Made with Debian's python3-pandas 1.5.3 (apt-get install python3-pandas):
  /usr/bin/python3 tests/golden/ser/gen_vpc_table.py
The values are those the tests' results files give (percentages 100 * x).
"""
import numpy as np
import pandas as pd


def table(rows, labels):
    df = pd.DataFrame(rows)
    m = df.groupby(['dataset', 'split', 'ser']).agg(
        {'UAR': ['mean'], **{k: ['mean'] for k in labels}})
    m.reset_index(inplace=True)
    print('---- SER results ----')
    print(m.sort_values(by=['dataset', 'split']).to_string())
    print()


L4 = ['ACC_ang', 'ACC_hap', 'ACC_neu', 'ACC_sad']
# test_vpc_utility.c
table([{'dataset': 'libri', 'split': 'iemocap_dev', 'fold': 1, 'ser': 'original',
        'UAR': 100 * 0.6523, 'ACC_ang': 100 * 0.7, 'ACC_hap': 100 * 0.55,
        'ACC_neu': 100 * 0.8, 'ACC_sad': 100 * 0.559},
       {'dataset': 'libri', 'split': 'iemocap_dev', 'fold': 1, 'ser': 'anon',
        'UAR': 100 * 0.361111, 'ACC_ang': 100 * 0.5, 'ACC_hap': 100 * 0.25,
        'ACC_neu': np.nan, 'ACC_sad': 100 * 0.3333333}], L4)
# test_utility_gates.sh
table([{'dataset': 'a', 'split': 'data', 'fold': 1, 'ser': 'original', 'UAR': 100.0,
        'ACC_ang': 100.0, 'ACC_hap': 100.0, 'ACC_neu': 100.0, 'ACC_sad': 100.0},
       {'dataset': 'a', 'split': 'data', 'fold': 1, 'ser': 'anon', 'UAR': 12.5,
        'ACC_ang': 0.0, 'ACC_hap': 50.0, 'ACC_neu': 0.0, 'ACC_sad': 0.0}], L4)
