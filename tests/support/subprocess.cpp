#include "subprocess.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gmt::test {
namespace {

struct Spawned {
    pid_t pid = -1;
    int out = -1;
    int err = -1;
};

Spawned spawn(const std::vector<std::string>& argv, const Environment& env) {
    std::vector<std::string> envs;
    for (char** e = environ; *e; ++e) {
        std::string kv(*e);
        std::string key = kv.substr(0, kv.find('='));
        bool overridden =
            std::any_of(env.begin(), env.end(), [&](auto& p) { return p.first == key; });
        if (!overridden) {
            envs.push_back(kv);
        }
    }
    for (auto& [k, v] : env) {
        envs.push_back(k + "=" + v);
    }
    std::vector<char*> cargv, cenv;
    for (auto& a : argv) {
        cargv.push_back(const_cast<char*>(a.c_str()));
    }
    cargv.push_back(nullptr);
    for (auto& e : envs) {
        cenv.push_back(const_cast<char*>(e.c_str()));
    }
    cenv.push_back(nullptr);
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) {
        throw std::runtime_error("pipe failed");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addclose(&actions, err[0]);
    Spawned s;
    int rc = posix_spawn(&s.pid, cargv[0], &actions, nullptr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    close(err[1]);
    if (rc != 0) {
        close(out[0]);
        close(err[0]);
        throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(rc));
    }
    s.out = out[0];
    s.err = err[0];
    return s;
}

// Reads both pipes until EOF; stops early when `until` appears in stdout.
void pump(Spawned& s, ProcessResult& r, const std::string& until) {
    pollfd fds[2] = {{s.out, POLLIN, 0}, {s.err, POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) {
                continue;
            }
            char buf[4096];
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n <= 0) {
                fds[i].fd = -1;
                --open_fds;
                continue;
            }
            (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
        }
        if (!until.empty() && r.out.find(until) != std::string::npos) {
            return;
        }
    }
}

void finish(Spawned& s, ProcessResult& r) {
    pump(s, r, "");
    close(s.out);
    close(s.err);
    int status = 0;
    waitpid(s.pid, &status, 0);
    r.exited = WIFEXITED(status);
    r.exit_code = r.exited ? WEXITSTATUS(status) : -1;
    r.term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

} // namespace

ProcessResult runProcess(const std::vector<std::string>& argv, const Environment& env) {
    Spawned s = spawn(argv, env);
    ProcessResult r;
    finish(s, r);
    return r;
}

ProcessResult runAndSignalAfter(const std::vector<std::string>& argv, const Environment& env,
                                const std::string& line, int signal) {
    Spawned s = spawn(argv, env);
    ProcessResult r;
    pump(s, r, line);
    kill(s.pid, signal);
    finish(s, r);
    return r;
}

std::vector<std::string> listFiles(const std::string& dir, const std::string& suffix) {
    std::vector<std::string> out;
    for (auto& entry : std::filesystem::directory_iterator(dir)) {
        std::string name = entry.path().string();
        if (name.size() >= suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            out.push_back(name);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace gmt::test
