"""What the live fuzzers share (Fuzz/run-live.sh): a free loopback port, a real mosquitto, the
real waymarkd run as user nobody (as root) with its state directory its own, and the oracle's
checks of what it leaves behind."""
import os
import shutil
import socket
import subprocess
import tempfile
import time

NOBODY = 65534


def free_port():
    """A loopback TCP port nobody listens on now."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def start_mosquitto(scratch):
    """A mosquitto on a free loopback port that queues without limit; (process, port)."""
    port = free_port()
    config = os.path.join(scratch, "mosquitto.conf")
    with open(config, "w") as file:
        file.write(f"user root\nlistener {port} 127.0.0.1\nallow_anonymous true\n"
                   "max_queued_messages 0\nmessage_size_limit 0\n")
    broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", config],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return broker, port


def stop(process):
    process.terminate()
    process.wait()


def integrity_problem(store):
    """Why `store` fails `PRAGMA integrity_check`, or None."""
    check = subprocess.run(["sqlite3", store, "PRAGMA integrity_check"], capture_output=True,
                           text=True)
    if check.stdout.strip() == "ok":
        return None
    return f"integrity_check of {store}: {check.stdout.strip()[:200]} {check.stderr.strip()[:200]}"


class Daemon:
    """waymarkd with `config` lines, its store granted `waymarkd always` in `scratch`/state; as
    root it runs as user nobody, and what that user wrote elsewhere is found afterwards."""

    def __init__(self, waymarkd, waymark, scratch, config):
        self.scratch = scratch
        self.state = os.path.join(scratch, "state")
        os.makedirs(self.state, exist_ok=True)
        self.store = os.path.join(self.state, "waymark.db")
        self.log_path = os.path.join(scratch, "waymarkd.log")
        self.waymarkd, self.config = waymarkd, config
        subprocess.run([waymark, "auth", "grant", "waymarkd", "always", "--store", self.store],
                       check=True, stdout=subprocess.DEVNULL)
        self.as_nobody = bool(os.geteuid() == 0 and shutil.which("setpriv"))
        self.process = None

    def start(self):
        config = os.path.join(self.scratch, "waymark.conf")
        with open(config, "w") as file:
            file.write("\n".join(self.config) + "\n")
        command = [self.waymarkd, "--config", config]
        if self.as_nobody:
            for root, directories, files in os.walk(self.scratch):
                for name in directories + files:
                    os.chown(os.path.join(root, name), NOBODY, NOBODY)
            os.chown(self.scratch, NOBODY, NOBODY)
            command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] + command
        self.marker = os.path.join(tempfile.gettempdir(), f"waymark-live-fuzz-marker-{os.getpid()}")
        open(self.marker, "w").close()
        self.process = subprocess.Popen(
            command, env={"PATH": "/usr/bin:/bin", "STATE_DIRECTORY": self.state},
            stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT)

    def finish(self, problems):
        """SIGTERM (exit 0 expected), then the store's integrity and the files written outside
        the state directory, each failure appended to `problems`."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                status = self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                status = "hung on SIGTERM"
            if status != 0:
                problems.append(f"waymarkd exited {status} on SIGTERM")
        elif not problems:
            problems.append(f"waymarkd exited {self.process.returncode}")
        problem = integrity_problem(self.store)
        if problem:
            problems.append(problem)
        if self.as_nobody:
            # Where user nobody could write at all: the world-writable places.
            places = [path for path in ("/tmp", "/var/tmp", "/dev/shm", "/run", "/var/lib",
                                        "/etc", "/home", "/root") if os.path.isdir(path)]
            found = subprocess.run(
                ["find"] + places + ["-xdev", "-user", str(NOBODY), "-newer", self.marker,
                                     "-not", "-path", self.scratch + "*"],
                capture_output=True, text=True)
            written = [line for line in found.stdout.splitlines() if line]
            if written:
                problems.append(f"written outside the state directory: {written[:5]}")
        os.unlink(self.marker)
