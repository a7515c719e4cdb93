"""The zoo of wrong implementations (members.py) and the test that the suite catches them."""

#: Member name -> the ids of the cases that caught it, filled as the zoo test runs.
RESULTS: dict[str, list[str]] = {}
