"""Pass / fail counting shared by the Python test scripts."""


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what):
        """Counts one check; prints `what` when it failed."""
        self.passed += bool(ok)
        self.failed += not ok
        if not ok:
            print('FAIL', what)

    def finish(self):
        print(f'{self.passed} passed, {self.failed} failed')
        return 1 if self.failed else 0
