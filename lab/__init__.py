"""The lab: experiment code that the library does not need, kept beside it.

Nothing here is installed (the wheel holds ``cf_env``, ``agents``, ``training`` and
``chickenfoot`` only); run it from a checkout, ``python -m lab.luck ...``. It is linted and its
tests run in CI with the library's (``lab/tests``). Each study's question, command, figures and
conclusion are in ``lab/results/``.
"""
