"""The play pipeline: every game the tool plays goes through here.

``planning`` (the plan every command builds: decks, catalog, rules, pilots, tables of play,
game numbering), ``inputs`` (a call's per-game inputs, one record), ``arguments`` (the
argument checks commands share), ``execution`` (chunks played
and written, progress, the local backend), ``evaluation`` (games for scores, paired on
common deals, stored and resumable), ``ray_backend`` (the same chunks as Ray tasks),
``runner`` (the ``run`` command's run dirs: start, resume), and the run-dir files:
``manifests``, ``outdir`` (the folder a command claims), ``rundir`` (a run dir verified),
``searchdirs`` (the search commands' dirs verified), ``identity`` (what each file was made
from), ``dirlock`` (one writer a dir), ``bounds`` (sizes bounded), ``schema`` (the tables'
columns), and ``budget`` (a search's games split into named phases).
"""
