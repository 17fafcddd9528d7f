"""The cluster table reader (cluster/spec.py): what it accepts, what it refuses and how.

A user's cluster file is read once; a mistake in it must be refused with one message that
names the file, the row the user sees (the header line of a CSV is row 1; the first
machine of a YAML, TOML or Parquet file is row 1), the column, and what was expected.
Every expected value below is written by hand from the file format (README, the
docstrings of ``cluster_from_table`` and ``ClusterSpec``), not taken from the code's output.
"""
from __future__ import annotations

import gzip
import io
import math

import numpy as np
import pandas as pd
import pytest

from schedlab.cluster.spec import cluster_from_table, homogeneous_cluster, read_cluster
from schedlab.errors import InputError

INF = math.inf
CAPACITY_COLUMNS = ["cpu", "mem", "disk", "net", "slots"]     # the order of spec.capacity
STRICTLY_POSITIVE = CAPACITY_COLUMNS + ["speed"]


def two_machines(**columns) -> pd.DataFrame:
    """Machines a and b, 1 cpu and 1 mem each, plus the given columns (two values each)."""
    return pd.DataFrame({"machine_id": ["a", "b"], "cpu": [1, 1], "mem": [1, 1], **columns})


def refusal(df: pd.DataFrame, **kw) -> tuple:
    with pytest.raises(InputError) as err:
        cluster_from_table(df, **kw)
    e = err.value
    return e.file, e.row, e.column, e.message, e.expected


# --- The spec itself -----------------------------------------------------------------------

def test_a_homogeneous_cluster_models_only_cpu_and_mem_unless_told():
    """3 machines <4 cpu, 16 mem>: disk, net and slots are not modelled (inf), speed 1,
    present from 0 to the end, named "cluster", no attributes."""
    spec = homogeneous_cluster(3, cpu=4, mem=16)
    assert spec.name == "cluster" and spec.n_machines == 3
    assert spec.machine_ids.tolist() == ["m0", "m1", "m2"]
    assert spec.capacity.tolist() == [[4, 16, INF, INF, INF]] * 3
    assert spec.speed.tolist() == [1, 1, 1]
    assert spec.add_time.tolist() == [0, 0, 0] and spec.remove_time.tolist() == [INF] * 3
    assert spec.attrs.shape == (3, 0)


def test_a_homogeneous_cluster_takes_every_resource_its_speed_and_its_name():
    spec = homogeneous_cluster(2, cpu=8, mem=32, disk=100, net=10, slots=4, speed=2.5,
                               name="rack")
    assert spec.name == "rack"
    assert spec.capacity.tolist() == [[8, 32, 100, 10, 4]] * 2
    assert spec.speed.tolist() == [2.5, 2.5]


def test_the_arrays_of_a_spec_cannot_be_written():
    """A spec is shared by every run of a sweep: writing to it must fail loudly."""
    spec = homogeneous_cluster(2, cpu=4, mem=8)
    for arr in (spec.capacity, spec.speed, spec.add_time, spec.remove_time):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 7.0


def test_to_frame_gives_the_table_back_with_its_attributes():
    """Machine a <4 cpu, 8 mem, 100 disk>, speed 1, from 0 to 50; machine b <2, 6, disk
    not given (inf)>, speed 2, from 5 on; platform x and y kept as an attribute."""
    df = two_machines(disk=[100, None], speed=[1, 2], add_time=[0, 5], remove_time=[50, None],
                      platform=["x", "y"])
    df[["cpu", "mem"]] = [[4, 8], [2, 6]]
    frame = cluster_from_table(df).to_frame()
    assert frame.columns.tolist() == ["machine_id", "cpu", "mem", "disk", "net", "slots",
                                      "speed", "add_time", "remove_time", "platform"]
    assert frame.values.tolist() == [["a", 4, 8, 100, INF, INF, 1, 0, 50, "x"],
                                     ["b", 2, 6, INF, INF, INF, 2, 5, INF, "y"]]


def test_describe_sums_the_finite_capacities_of_each_modelled_resource():
    """cpu 4 + 2 = 6 and mem 8 + 6.5 = 14.5; disk is modelled on a only (100, b's inf
    counts 0); net 0.5 + 0.25 = 0.75; slots modelled nowhere: left out."""
    df = two_machines(disk=[100, None], net=[0.5, 0.25])
    df[["cpu", "mem"]] = [[4, 8], [2, 6.5]]
    assert cluster_from_table(df).describe() == \
        "2 machines, cpu total 6, mem total 14.5, disk total 100, net total 0.75"


# --- Columns ---------------------------------------------------------------------------------

@pytest.mark.parametrize("columns, missing", [
    (["machine_id", "cpu"], "['mem']"),
    (["machine_id", "mem"], "['cpu']"),
    (["machine_id"], "['cpu', 'mem']"),
])
def test_a_table_without_cpu_or_mem_is_refused_naming_what_is_missing(columns, missing):
    df = pd.DataFrame({c: ["a"] if c == "machine_id" else [1] for c in columns})
    assert refusal(df, source="rack.csv") == (
        "rack.csv", None, None, f"missing required column(s) {missing}; found {columns}",
        "columns machine_id (or count), cpu, mem")


def test_a_table_needs_machine_ids_or_counts():
    df = pd.DataFrame({"cpu": [1], "mem": [1]})
    assert refusal(df, source="rack.csv") == (
        "rack.csv", None, None, "needs a 'machine_id' column or a 'count' column", None)


def test_an_empty_table_is_refused_and_one_row_is_enough():
    df = pd.DataFrame({"machine_id": [], "cpu": [], "mem": []})
    assert refusal(df, source="rack.csv") == (
        "rack.csv", None, None, "the cluster has no machines", None)
    one = cluster_from_table(pd.DataFrame({"machine_id": ["solo"], "cpu": [1], "mem": [2]}))
    assert one.machine_ids.tolist() == ["solo"] and one.capacity[0, :2].tolist() == [1, 2]


def test_errors_name_the_default_source_when_none_is_given():
    """A table built in code has no file: errors say "<cluster>", and so does its name."""
    df = pd.DataFrame({"machine_id": ["a"], "cpu": [0], "mem": [1]})
    assert refusal(df)[:2] == ("<cluster>", 2)
    assert cluster_from_table(df.assign(cpu=1)).name == "<cluster>"


def test_unknown_columns_are_kept_as_attributes_and_known_ones_are_not():
    """Every known column present, plus rack and owner: only rack and owner are attributes."""
    df = pd.DataFrame({"machine_id": ["a", "b"], "rack": ["r1", "r2"], "cpu": [1, 1], "mem": [1, 1],
                       "disk": [1, 1], "net": [1, 1], "slots": [1, 1], "speed": [1, 1],
                       "add_time": [0, 0], "remove_time": [9, 9], "owner": ["x", "y"]})
    attrs = cluster_from_table(df).attrs
    assert attrs.columns.tolist() == ["rack", "owner"]
    assert attrs.values.tolist() == [["r1", "x"], ["r2", "y"]]


def test_a_table_with_count_and_every_known_column_has_no_attributes():
    df = pd.DataFrame({"count": [2], "machine_id": ["a"], "cpu": [1], "mem": [1], "disk": [1],
                       "net": [1], "slots": [1], "speed": [1], "add_time": [0], "remove_time": [9]})
    assert cluster_from_table(df).attrs.shape == (2, 0)


# --- Numbers ---------------------------------------------------------------------------------

@pytest.mark.parametrize("col", STRICTLY_POSITIVE)
def test_a_capacity_or_speed_of_zero_is_refused_on_its_row(col):
    """Rows count from the header line (row 1): machine b is row 3."""
    df = two_machines(**{col: [0.5, 0]})
    assert refusal(df, source="rack.csv") == ("rack.csv", 3, col, "value 0 is out of range", "> 0")


@pytest.mark.parametrize("col", STRICTLY_POSITIVE)
def test_a_capacity_or_speed_below_one_is_accepted(col):
    spec = cluster_from_table(two_machines(**{col: [0.5, 0.25]}))
    got = spec.speed if col == "speed" else spec.capacity[:, CAPACITY_COLUMNS.index(col)]
    assert got.tolist() == [0.5, 0.25]


@pytest.mark.parametrize("col", STRICTLY_POSITIVE + ["add_time", "remove_time", "count"])
def test_a_word_where_a_number_belongs_is_refused_on_the_first_bad_row(col):
    """Rows b (row 3) and c (row 4) are both bad: the first one is named, with its value."""
    df = pd.DataFrame({"machine_id": ["a", "b", "c"], "cpu": [1, 1, 1], "mem": [1, 1, 1]})
    df[col] = [1, "lots", "many"]
    assert refusal(df, source="rack.csv") == (
        "rack.csv", 3, col, "value 'lots' is not a number", "a number")


@pytest.mark.parametrize("col", ["cpu", "mem"])
def test_a_missing_cpu_or_mem_is_refused_on_the_first_row_without_it(col):
    df = pd.DataFrame({"machine_id": ["a", "b", "c"], "cpu": [1, 1, 1], "mem": [1, 1, 1]})
    df[col] = [1, None, None]
    assert refusal(df, source="rack.csv") == ("rack.csv", 3, col, "value is missing", "a number")


def test_empty_optional_cells_take_their_defaults():
    """Machine b leaves every optional cell empty: disk, net, slots not modelled (inf),
    speed 1, joins at 0, never leaves. Machine a gives them all."""
    df = two_machines(disk=[10, None], net=[20, None], slots=[3, None], speed=[2, None],
                      add_time=[4, None], remove_time=[40, None])
    spec = cluster_from_table(df)
    assert spec.capacity.tolist() == [[1, 1, 10, 20, 3], [1, 1, INF, INF, INF]]
    assert spec.speed.tolist() == [2, 1]
    assert spec.add_time.tolist() == [4, 0] and spec.remove_time.tolist() == [40, INF]


def test_join_and_leave_times_may_be_negative_or_zero():
    """Times are not capacities: a machine may join before the trace starts."""
    spec = cluster_from_table(two_machines(add_time=[-5, 0], remove_time=[-1, 0]))
    assert spec.add_time.tolist() == [-5, 0] and spec.remove_time.tolist() == [-1, 0]


def test_whole_numbers_in_the_file_give_float_arrays():
    """pandas reads a column of whole numbers as ints; ClusterSpec promises float arrays."""
    spec = cluster_from_table(two_machines(speed=[1, 2], add_time=[0, 3], remove_time=[9, 8]))
    for arr in (spec.capacity, spec.speed, spec.add_time, spec.remove_time):
        assert arr.dtype == np.float64


# --- Counts and machine ids -----------------------------------------------------------------

def test_counted_rows_become_numbered_machines_with_their_row_repeated():
    """Row a (2 machines), an unnamed row (2 machines, named after its position, m1) and
    row c (1 machine, keeps its plain name). Every column follows its row."""
    df = pd.DataFrame({"machine_id": ["a", None, "c"], "count": [2, 2, 1],
                       "cpu": [1, 2, 3], "mem": [4, 5, 6], "speed": [1, 2, 3],
                       "add_time": [0, 7, 0], "remove_time": [None, None, 30],
                       "rack": ["r1", "r2", "r3"]})
    spec = cluster_from_table(df)
    assert spec.machine_ids.tolist() == ["a-0", "a-1", "m1-0", "m1-1", "c"]
    assert spec.capacity[:, :2].tolist() == [[1, 4], [1, 4], [2, 5], [2, 5], [3, 6]]
    assert spec.speed.tolist() == [1, 1, 2, 2, 3]
    assert spec.add_time.tolist() == [0, 0, 7, 7, 0]
    assert spec.remove_time.tolist() == [INF, INF, INF, INF, 30]
    assert spec.attrs.columns.tolist() == ["rack"]
    assert spec.attrs["rack"].tolist() == ["r1", "r1", "r2", "r2", "r3"]
    assert spec.attrs.index.tolist() == [0, 1, 2, 3, 4]


def test_a_table_with_its_own_index_reads_as_the_same_cluster():
    """The same three rows indexed 10, 20, 30 (a filtered frame, say): same ids, same
    attributes, same row numbers in errors."""
    df = pd.DataFrame({"machine_id": ["a", None, "c"], "count": [2, 2, 1], "cpu": [1, 2, 3],
                       "mem": [4, 5, 6], "rack": ["r1", "r2", "r3"]}, index=[10, 20, 30])
    spec = cluster_from_table(df)
    assert spec.machine_ids.tolist() == ["a-0", "a-1", "m1-0", "m1-1", "c"]
    assert spec.attrs.columns.tolist() == ["rack"]
    assert refusal(df.assign(cpu=[1, 0, 1]))[1:3] == (3, "cpu")


def test_counts_without_machine_ids_number_the_machines_from_m0():
    df = pd.DataFrame({"count": [2, 1, None], "cpu": [1, 2, 3], "mem": [1, 1, 1]})
    spec = cluster_from_table(df)
    assert spec.machine_ids.tolist() == ["m0", "m1", "m2", "m3"]
    assert spec.capacity[:, 0].tolist() == [1, 1, 2, 3]


def test_a_count_of_one_is_accepted_and_zero_is_refused():
    df = pd.DataFrame({"count": [1, 0], "cpu": [1, 1], "mem": [1, 1]})
    assert refusal(df, source="rack.csv") == ("rack.csv", 3, "count", "value 0 is out of range",
                                              ">= 1")
    assert cluster_from_table(df.iloc[:1]).n_machines == 1


def test_a_fractional_count_is_refused_on_the_first_such_row():
    df = pd.DataFrame({"count": [1, 2.5, 3.5], "cpu": [1, 1, 1], "mem": [1, 1, 1]})
    assert refusal(df, source="rack.csv") == (
        "rack.csv", 3, "count", "count must be a whole number", "an integer >= 1")


def test_a_repeated_machine_id_is_refused_on_its_second_row():
    df = pd.DataFrame({"machine_id": ["a", "b", "a"], "cpu": [1, 1, 1], "mem": [1, 1, 1]})
    assert refusal(df, source="rack.csv") == ("rack.csv", 4, "machine_id",
                                              "machine_id 'a' appears twice", "unique ids")


@pytest.mark.parametrize("ids, counts, twice", [
    (["a", "a"], [1, 1], "a"),             # the same name on two counted rows
    (["a", "a-1"], [2, 1], "a-1"),         # a x 2 gives a-0, a-1; the next row says a-1 again
])
def test_counted_rows_may_not_repeat_a_machine_id(ids, counts, twice):
    """With a count column the ids are derived (name-k); they must still be unique, and the
    error names the row that makes the second one (row 3, the header being row 1)."""
    df = pd.DataFrame({"machine_id": ids, "count": counts, "cpu": 1, "mem": 1})
    assert refusal(df, source="rack.csv") == ("rack.csv", 3, "machine_id",
                                              f"machine_id {twice!r} appears twice", "unique ids")


def test_a_counted_name_and_its_numbered_copies_may_coexist():
    """b x 3 gives b-0, b-1, b-2: a further machine called plain "b" is a different id."""
    df = pd.DataFrame({"machine_id": ["b", "b"], "count": [3, 1], "cpu": 1, "mem": 1})
    assert cluster_from_table(df).machine_ids.tolist() == ["b-0", "b-1", "b-2", "b"]


@pytest.mark.parametrize("df", [
    pd.DataFrame({"machine_id": ["a", "b"], "cpu": 1, "mem": 1}),
    pd.DataFrame({"machine_id": ["a", "b"], "count": [2, 1], "cpu": 1, "mem": 1}),
    pd.DataFrame({"count": [2, 1], "cpu": 1, "mem": 1}),
], ids=["named", "named and counted", "counted"])
def test_machine_ids_are_plain_strings_in_every_form_of_table(df):
    """Ids reach the user through repr in messages ("machine_id 'a' appears twice"): a numpy
    string there would read np.str_('a'). So each id is a Python str, whatever the form."""
    assert {type(i) for i in cluster_from_table(df).machine_ids} == {str}


def test_numeric_machine_ids_are_read_as_text():
    spec = cluster_from_table(pd.DataFrame({"machine_id": [7, 8], "cpu": [1, 1], "mem": [1, 1]}))
    assert spec.machine_ids.tolist() == ["7", "8"]


def test_a_cluster_is_named_after_its_source_unless_named():
    df = two_machines()
    assert cluster_from_table(df, source="x/rack7.csv").name == "rack7"
    assert cluster_from_table(df, source="x/rack7.csv", name="mine").name == "mine"


# --- Files -------------------------------------------------------------------------------------

MACHINES_CSV = "machine_id,cpu,mem\na,4,8\nb,2,6\n"
MACHINES_YAML = ("machines:\n  - {machine_id: a, cpu: 4, mem: 8}\n"
                 "  - {machine_id: b, cpu: 2, mem: 6}\n")
MACHINES_TOML = ('[[machines]]\nmachine_id = "a"\ncpu = 4\nmem = 8\n'
                 '[[machines]]\nmachine_id = "b"\ncpu = 2\nmem = 6\n')


def write_machines(path, *, bad_b: bool = False):
    """Machines a <4, 8> and b <2, 6> (or b with cpu 0) in the format of ``path``'s name."""
    csv, yaml, toml = MACHINES_CSV, MACHINES_YAML, MACHINES_TOML
    if bad_b:
        csv, yaml = csv.replace("b,2", "b,0"), yaml.replace("b, cpu: 2", "b, cpu: 0")
        toml = toml.replace('"b"\ncpu = 2', '"b"\ncpu = 0')
    name = path.name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(csv.encode()))
    elif name.endswith(".parquet"):
        pd.read_csv(io.StringIO(csv)).to_parquet(path)
    elif name.endswith((".yaml", ".yml")):
        path.write_text(yaml)
    elif name.endswith(".toml"):
        path.write_text(toml)
    else:
        path.write_text(csv)
    return path


@pytest.mark.parametrize("filename, name", [
    ("rack.csv", "rack"), ("rack.csv.gz", "rack"), ("rack.parquet", "rack"),
    ("rack.yaml", "rack"), ("rack.yml", "rack"), ("rack.toml", "rack"),
    # every known suffix is dropped, in the order gz, csv, parquet, yaml, yml, toml: a
    # TOML table converted to Parquet or YAML is still "rack"
    ("rack.toml.parquet", "rack"), ("rack.toml.yaml", "rack"),
])
def test_every_format_reads_the_same_machines_named_after_the_file(tmp_path, filename, name):
    spec = read_cluster(write_machines(tmp_path / filename))
    assert spec.name == name
    assert spec.machine_ids.tolist() == ["a", "b"]
    assert spec.capacity[:, :2].tolist() == [[4, 8], [2, 6]]


@pytest.mark.parametrize("filename, row", [
    ("rack.csv", 3), ("rack.csv.gz", 3),                 # the header line is row 1
    ("rack.parquet", 2), ("rack.yaml", 2), ("rack.toml", 2),   # the first machine is row 1
])
def test_a_bad_value_in_a_file_names_the_file_and_the_row_the_user_sees(tmp_path, filename, row):
    path = write_machines(tmp_path / filename, bad_b=True)
    with pytest.raises(InputError) as err:
        read_cluster(path)
    e = err.value
    assert (e.file, e.row, e.column, e.message) == (str(path), row, "cpu",
                                                    "value 0 is out of range")


def test_a_missing_file_is_named(tmp_path):
    path = tmp_path / "nowhere.csv"
    with pytest.raises(InputError) as err:
        read_cluster(path)
    assert (err.value.file, err.value.message) == (str(path), "file not found")


@pytest.mark.parametrize("filename, body, message_start", [
    ("rack.csv", b"", "cannot read as CSV: "),
    ("rack.parquet", b"these bytes are not a Parquet file", "cannot read as Parquet: "),
    ("rack.yaml", b"machines: [", "cannot parse: "),
    ("rack.yml", b"machines: [", "cannot parse: "),
    ("rack.toml", b"machines = [", "cannot parse: "),
])
def test_an_unreadable_file_is_an_input_error_naming_it(tmp_path, filename, body, message_start):
    path = tmp_path / filename
    path.write_bytes(body)
    with pytest.raises(InputError) as err:
        read_cluster(path)
    assert err.value.file == str(path)
    assert err.value.message.startswith(message_start)
    assert len(err.value.message) > len(message_start)      # the reader's own reason follows


@pytest.mark.parametrize("filename, body", [
    ("rack.yaml", "- {machine_id: a, cpu: 1, mem: 1}\n"),          # a list, not a mapping
    ("rack.yaml", "machines: {machine_id: a, cpu: 1, mem: 1}\n"),   # one table, not a list
    ("rack.yaml", "machines: []\n"),
    ("rack.toml", 'machines = "a"\n'),
])
def test_a_structured_file_needs_a_non_empty_machines_list(tmp_path, filename, body):
    path = tmp_path / filename
    path.write_text(body)
    with pytest.raises(InputError) as err:
        read_cluster(path)
    assert (err.value.file, err.value.message) == (
        str(path), "expected a top-level 'machines' list of tables, e.g. "
                   "[[machines]] count = 10, cpu = 32, mem = 128")
