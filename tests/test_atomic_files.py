"""Files and folders that a kill leaves whole: each point where a kill can cut a write, and what a reader finds."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from st_contrastive.atomic_files import recover_folder, save_folder_atomically, write_atomically


def test_a_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "state.json"
    write_atomically(path, "old")
    write_atomically(path, b"new bytes")
    assert path.read_bytes() == b"new bytes"
    assert os.listdir(tmp_path) == ["state.json"]


def test_a_failed_save_leaves_the_folder_as_it_was(tmp_path):
    folder = tmp_path / "model"
    save_folder_atomically(folder, lambda path: (path.mkdir(), (path / "weights").write_text("round 0")))

    def failing(path):
        path.mkdir()
        (path / "weights").write_text("half of round 1")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        save_folder_atomically(folder, failing)
    assert (folder / "weights").read_text() == "round 0"
    save_folder_atomically(folder, lambda path: (path.mkdir(), (path / "weights").write_text("round 1")))
    assert (folder / "weights").read_text() == "round 1"
    assert sorted(os.listdir(tmp_path)) == ["model"]  # the cut save's folder is gone with the next save


def test_a_kill_between_the_two_renames_is_recovered(tmp_path):
    folder, previous = tmp_path / "model", tmp_path / ".model.previous"
    previous.mkdir()  # the old folder moved aside, the new one not moved in yet
    (previous / "weights").write_text("round 0")
    recover_folder(folder)
    assert (folder / "weights").read_text() == "round 0" and not previous.exists()
    previous.mkdir()  # both renames done, the old folder not removed yet
    recover_folder(folder)
    assert (folder / "weights").read_text() == "round 0" and not previous.exists()


def test_files_killed_at_random_moments_are_always_whole(tmp_path):
    """A process rewriting a file and a folder in a loop, SIGKILLed twenty times: each time a reader finds one whole
    version of each (every line of the file, and the folder's two files, from one write)."""
    script = textwrap.dedent(
        f"""
        import itertools, sys
        from pathlib import Path
        from st_contrastive.atomic_files import save_folder_atomically, write_atomically

        def save(path, n):
            path.mkdir()
            (path / "a").write_text(str(n) * 5000)
            (path / "b").write_text(str(n) * 5000)

        for n in itertools.count():
            write_atomically(Path({str(tmp_path)!r}) / "file", "\\n".join([str(n % 10)] * 20000))
            save_folder_atomically(Path({str(tmp_path)!r}) / "folder", lambda path: save(path, n % 10))
            if n == 3:
                print("running", flush=True)
        """
    )
    for kill in range(20):
        process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        assert process.stdout.readline() == "running\n"
        subprocess.run(["sleep", str(0.01 * (kill % 7))], check=True)
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stdout.close()
        assert len(set((tmp_path / "file").read_text().splitlines())) == 1
        recover_folder(tmp_path / "folder")
        a, b = ((tmp_path / "folder" / name).read_text() for name in "ab")
        assert a == b and len(set(a)) == 1 and len(a) == 5000
