# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

package MallocTest;

# Test harness: starts a real nginx (Debian's /usr/sbin/nginx) with the
# module, on a free loopback port, in its own prefix, on jemalloc unless
# told otherwise.  Our own code, in the shape of nginx-tests.

use strict;
use warnings;

use Cwd qw(abs_path);
use Exporter qw(import);
use File::Basename qw(dirname);
use File::Temp qw(tempdir);
use HTTP::Tiny;
use IO::Socket::INET;
use JSON::PP;
use POSIX qw(WNOHANG);
use Test::More;
use Time::HiRes qw(sleep time);

our @EXPORT_OK = qw(json_decode poll_until free_port alive held frames
                    rss_kb);

our $ROOT = abs_path(dirname(__FILE__) . '/../..');
our $NGINX = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
our $JEMALLOC = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
our $MALLOC_CONF = 'prof:true,prof_active:false';

# another build of the modules (make test-ubsan: build-ubsan), and a
# library preloaded with jemalloc, or alone (its runtime, libubsan.so.1)
our $MODULE_DIR = $ENV{TEST_MODULE_DIR} || 'build';
$MODULE_DIR = "$ROOT/$MODULE_DIR" if $MODULE_DIR !~ m{^/};
our $PRELOAD_EXTRA = $ENV{TEST_PRELOAD_EXTRA};

# make test-asan: ASan's runtime is preloaded and is the process's
# malloc(), so jemalloc cannot be; the parts of a test that need it are
# skipped (see asan), and a nginx that would run on it is not started
our $ASAN = $ENV{TEST_ASAN};

# nginx started by root runs its workers as nobody; started by a user, as
# that user
our $WORKER_UID = $> == 0 ? scalar getpwnam('nobody') : $>;

my $JSON = JSON::PP->new->utf8->allow_nonref;

# whether nginx runs on ASan's malloc(), with no jemalloc to be had
sub asan {
    return $ASAN;
}

sub json_decode {
    my ($text) = @_;
    my $v = eval { $JSON->decode($text) };
    return $v;
}

# calls $check every 20 ms until it returns true or $secs pass
sub poll_until {
    my ($secs, $check) = @_;
    my $end = time() + $secs;
    while (1) {
        my $v = $check->();
        return $v if $v;
        return undef if time() > $end;
        sleep 0.02;
    }
}

# the names of stack $i of a heap.json answer, root first: its node and
# the node's ancestors ("nodes": a name and how many nodes back the
# parent is, 0: none)
sub frames {
    my ($j, $i) = @_;
    my @names;
    my $n = $j->{stacks}[$i];
    while (defined $n) {
        unshift @names, $j->{names}[$j->{nodes}[2 * $n]];
        my $up = $j->{nodes}[2 * $n + 1];
        $n = $up ? $n - $up : undef;
    }
    return @names;
}

# the resident memory of process $pid, in kB; -1 when it is gone
sub rss_kb {
    my ($pid) = @_;
    open my $s, '<', "/proc/$pid/status" or return -1;
    my ($kb) = join('', <$s>) =~ /^VmRSS:\s+(\d+) kB/m;
    return $kb // -1;
}

# MiB that the stacks allocating in $func hold in a heap.json answer, in
# its "values" or $key ("base_values")
sub held {
    my ($j, $func, $key) = @_;
    my $sum = 0;
    for my $i (0 .. $#{$j->{stacks} // []}) {
        next unless $j->{names}[$j->{nodes}[2 * $j->{stacks}[$i]]] eq $func;
        $sum += $j->{$key // 'values'}[$i][0];
    }
    return $sum / (1024 * 1024);
}

# the process exists and is not a zombie (an orphan that init has not
# reaped yet)
sub alive {
    my ($pid) = @_;
    open my $fh, '<', "/proc/$pid/stat" or return 0;
    my $stat = <$fh> // return 0;
    return $stat !~ /^\d+ \(.*\) [ZX] /;
}

# the code blocks of a document that follow a "<!-- NAME: key -->" line
# (NAME: the test that runs them), by key
sub doc_blocks {
    my ($file) = @_;
    open my $fh, '<', $file or die "$file: $!";
    my (%doc, $name, $in);
    while (my $line = <$fh>) {
        if ($line =~ /^<!-- [\w.]+: (\S+) -->/) {
            $name = $1;
        } elsif (defined $name && !$in && $line =~ /^```/) {
            $in = 1;
            $doc{$name} = '';
        } elsif ($in && $line =~ /^```/) {
            undef $in;
            undef $name;
        } elsif ($in) {
            $doc{$name} .= $line;
        }
    }
    return %doc;
}

# A port for a server of a test, that no other test of this run takes,
# though prove -j runs several at once and test-dists several roots:
# picked at random among TEST_PORT_BASE .. + 3499 (10000 by default;
# each root of test-dists has a range of its own), below the kernel's
# ephemeral ports and apart from ports_to's, so that no client connection
# takes it, and reserved as a directory under /tmp until the process
# that took it exits.
our $PORT_BASE = $ENV{TEST_PORT_BASE} || 10000;
our $PORT_SPAN = 3500;
my $RESERVED = '/tmp/malloc-test-ports';
my @reserved;

# the reservations this process took go with it (not a forked child's)
END {
    for my $dir (@reserved) {
        my $owner = do { open my $fh, '<', "$dir/pid"; <$fh> } // '';
        next unless $owner eq $$;
        unlink "$dir/pid";
        rmdir $dir;
    }
}

sub free_port {
    mkdir $RESERVED, 01777;
    for (1 .. 2000) {
        my $port = $PORT_BASE + int(rand($PORT_SPAN));
        next unless reserve_port("$RESERVED/$port");
        my $s = IO::Socket::INET->new(
            LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'tcp',
            Listen => 1, ReuseAddr => 1);
        # in use by something else: the reservation keeps us off it
        next unless $s;
        close $s;
        return $port;
    }
    die "no free port in $PORT_BASE .. " . ($PORT_BASE + $PORT_SPAN - 1);
}

# takes the reservation $dir, or one whose process is gone
sub reserve_port {
    my ($dir) = @_;
    if (!mkdir $dir) {
        my $owner = do { open my $fh, '<', "$dir/pid"; <$fh> };
        my $age = time() - ((stat $dir)[9] // time());
        # being written, or held by a live process
        return 0 if !defined $owner ? $age < 10 : kill 0, $owner;
        # gone: whoever renames it first takes it again
        return 0 unless rename $dir, "$dir.stale.$$";
        unlink "$dir.stale.$$/pid";
        rmdir "$dir.stale.$$";
        mkdir $dir or return 0;
    }
    open my $fh, '>', "$dir/pid" or return 0;
    print $fh $$;
    close $fh;
    push @reserved, $dir;
    return 1;
}

# new(%opt):
#   workers   => 2            worker_processes
#   jemalloc  => 1            LD_PRELOAD jemalloc (0 with TEST_ASAN)
#   malloc_conf => '...'      MALLOC_CONF (undef: not set)
#   admin     => 'write=on'   malloc_admin parameters, undef: no location
#   http      => '...'        extra http-level directives
#   server    => '...'        extra server-level directives
#   conf      => '...'        whole nginx.conf, with %%PORT%%, %%PREFIX%%,
#                             %%MODULES%% and %%ROOT%% replaced
#   dump_dir  => 0            leave malloc_dump_dir out
#   module_dir => '/path'     load the modules from there
#   reuseport => 1            one socket per worker, so that tests reach
#                             every worker; 0 when a worker is stopped
#   log_level => 'info'       of error.log ('debug': nginx's debug log)
#   connections => 256        worker_connections
sub new {
    my ($class, %opt) = @_;

    my $self = bless {
        workers => 2, jemalloc => !$ASAN, admin => 'write=on',
        malloc_conf => $MALLOC_CONF, http => '', server => '',
        reuseport => 1, log_level => 'info', connections => 256,
        %opt,
    }, $class;

    # workers run as nobody: the prefix must be traversable for them
    $self->{prefix} = tempdir('malloc-test-XXXXXX', TMPDIR => 1,
                              CLEANUP => !$ENV{TEST_KEEP});
    chmod 0755, $self->{prefix};
    mkdir "$self->{prefix}/$_" for qw(logs conf);
    $self->{port} = free_port();

    return $self;
}

sub prefix { $_[0]{prefix} }
sub port { $_[0]{port} }
sub url { "http://127.0.0.1:$_[0]{port}$_[1]" }
sub dump_dir { "$_[0]{prefix}/dumps" }

sub modules {
    my ($self) = @_;
    my $dir = $self->{module_dir} // $MODULE_DIR;
    return "load_module $dir/ngx_http_malloc_module.so;\n"
        . "load_module $dir/ngx_http_malloc_test_module.so;\n";
}

sub conf_text {
    my ($self) = @_;
    my $p = $self->{prefix};

    my $conf = $self->{conf};

    if (!defined $conf) {
        my $admin = defined $self->{admin}
            ? "location /malloc/ { malloc_admin $self->{admin}; }" : '';
        my $reuseport = $self->{reuseport} ? 'reuseport' : '';
        my $dump = $self->{dump_dir} // 1
            ? "malloc_dump_dir $p/dumps;" : '';

        $conf = <<"EOF";
%%MODULES%%
worker_processes $self->{workers};
error_log $p/logs/error.log $self->{log_level};
pid $p/logs/nginx.pid;
env LD_PRELOAD;
env MALLOC_CONF;

events {
    worker_connections $self->{connections};
}

http {
    access_log $p/logs/access.log;
    client_body_temp_path $p/body;
    proxy_temp_path $p/proxy;
    fastcgi_temp_path $p/fastcgi;
    uwsgi_temp_path $p/uwsgi;
    scgi_temp_path $p/scgi;
    $dump
    $self->{http}

    server {
        listen 127.0.0.1:%%PORT%% $reuseport;

        $admin

        location /t/ {
            malloc_test;
        }

        location / {
            return 200 "ok\\n";
        }

        $self->{server}
    }
}
EOF
    }

    my $modules = $self->modules;
    $conf =~ s/%%MODULES%%/$modules/g;
    $conf =~ s/%%PORT%%/$self->{port}/g;
    $conf =~ s/%%PREFIX%%/$p/g;
    $conf =~ s/%%ROOT%%/$ROOT/g;
    return $conf;
}

sub write_conf {
    my ($self) = @_;
    open my $fh, '>', "$self->{prefix}/conf/nginx.conf" or die $!;
    print $fh $self->conf_text;
    close $fh;
}

sub env {
    my ($self) = @_;
    die "this test needs jemalloc, which ASan leaves out (TEST_ASAN)\n"
        if $self->{jemalloc} && $ASAN;
    my %env = (%ENV);
    delete $env{LD_PRELOAD};
    delete $env{MALLOC_CONF};
    my @preload = (($self->{jemalloc} ? $JEMALLOC : ()),
                   ($PRELOAD_EXTRA || ()));
    $env{LD_PRELOAD} = join ':', @preload if @preload;
    $env{MALLOC_CONF} = $self->{malloc_conf} if defined $self->{malloc_conf};
    return %env;
}

# runs nginx with the given arguments in the test's environment;
# returns (exit status, output)
sub run_nginx {
    my ($self, @args) = @_;
    local %ENV = $self->env;
    my $out = "$self->{prefix}/logs/cmd.out";
    my $rc = system("$NGINX -p $self->{prefix}/ -c "
        . "$self->{prefix}/conf/nginx.conf @args > $out 2>&1");
    open my $fh, '<', $out;
    local $/;
    my $text = <$fh> // '';
    return ($rc, $text);
}

sub test_conf {
    my ($self) = @_;
    $self->write_conf;
    return $self->run_nginx('-t');
}

sub start {
    my ($self) = @_;
    $self->write_conf;
    my ($rc, $out) = $self->run_nginx();
    die "nginx failed to start: $out" if $rc != 0;
    $self->{started} = 1;

    poll_until(10, sub { -s "$self->{prefix}/logs/nginx.pid" })
        or die "no pid file";
    # kept: the prefix (and its pid file) may be gone before DESTROY runs
    $self->{master} = $self->master_pid;
    poll_until(10, sub { $self->worker_pids == $self->{workers} })
        or die "workers did not start";
    poll_until(10, sub {
        IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                              PeerPort => $self->{port});
    }) or die "port $self->{port} not open";

    return $self;
}

sub master_pid {
    my ($self) = @_;
    open my $fh, '<', "$self->{prefix}/logs/nginx.pid" or return undef;
    my $pid = <$fh>;
    chomp $pid if defined $pid;
    return $pid;
}

# the workers of the current master, from /proc; titles tell old from new
sub worker_pids {
    my ($self, $all) = @_;
    my $master = $self->master_pid or return ();
    my @pids;
    opendir my $d, '/proc' or return ();
    for my $pid (grep { /^\d+$/ } readdir $d) {
        open my $fh, '<', "/proc/$pid/stat" or next;
        my $stat = <$fh> // next;
        my ($ppid) = $stat =~ /^\d+ \(.*\) \S (\d+)/ or next;
        next unless $ppid == $master;
        open my $cf, '<', "/proc/$pid/cmdline" or next;
        my $cmd = <$cf> // '';
        next unless $cmd =~ /worker process/;
        next if !$all && $cmd =~ /is shutting down/;
        push @pids, $pid;
    }
    @pids = sort { $a <=> $b } @pids;
    return @pids;
}

sub reload {
    my ($self, %opt) = @_;
    my %old = map { $_ => 1 } $self->worker_pids(1);
    $self->{$_} = $opt{$_} for keys %opt;
    $self->write_conf;
    my ($rc, $out) = $self->run_nginx('-s', 'reload');
    die "reload failed: $out" if $rc != 0;
    poll_until(10, sub {
        my @new = $self->worker_pids;
        @new == $self->{workers} && !grep { $old{$_} } @new;
    }) or die "reload did not replace the workers";
    return $self;
}

sub stop {
    my ($self) = @_;
    return unless $self->{started};
    my $master = $self->master_pid // $self->{master};
    $self->{started} = 0;
    return unless $master;
    kill 'TERM', $master;
    # SIGSTOPped workers would never see the TERM
    kill 'CONT', $self->worker_pids(1);
    poll_until(10, sub { !kill 0, $master });
}

sub DESTROY {
    my ($self) = @_;
    local $?;
    $self->stop;
}

sub http {
    my ($self, $method, $path, $body, %headers) = @_;
    my $ua = HTTP::Tiny->new(keep_alive => 0, timeout => 30);
    my $res = $ua->request($method, $self->url($path), {
        headers => \%headers,
        defined $body ? (content => $body) : (),
    });
    $res->{json} = json_decode($res->{content})
        if ($res->{headers}{'content-type'} // '') =~ m{application/json};
    return $res;
}

# a plain HTTP/1.0 request from a chosen local port: with reuseport the
# port decides which worker's socket takes the connection
sub http_from {
    my ($self, $lport, $method, $path, $body, $timeout) = @_;
    my $s = $self->send_from($lport, $method, $path, $body)
        or return { status => 599, content => "$!" };
    return $self->response($s, $timeout);
}

# a request sent on a connection of its own, the connection returned (for
# many at once); response() reads the answer
sub send {
    my ($self, $method, $path, $body) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $self->{port}, Timeout => 5)
        or return undef;
    $body //= '';
    print $s "$method $path HTTP/1.0\r\nHost: localhost\r\n"
        . "Content-Length: " . length($body) . "\r\n\r\n$body";
    $s->flush;
    return $s;
}

# the first half of http_from: the request sent, its connection returned
sub send_from {
    my ($self, $lport, $method, $path, $body) = @_;
    my $s = $self->connect_from($lport) or return undef;
    $body //= '';
    print $s "$method $path HTTP/1.0\r\nHost: localhost\r\n"
        . "Content-Length: " . length($body) . "\r\n\r\n$body";
    $s->flush;
    return $s;
}

# the second half: the response read until the server closes
sub response {
    my ($self, $s, $timeout) = @_;
    return { status => 599, head => '', content => '' } unless $s;
    my $text = '';
    my $rin = '';
    vec($rin, fileno($s), 1) = 1;
    my $end = time() + ($timeout // 30);
    while (time() < $end) {
        my $rout = $rin;
        last unless select($rout, undef, undef, $end - time());
        my $n = sysread($s, my $chunk, 65536);
        last unless $n;
        $text .= $chunk;
    }
    close $s;
    my ($head, $content) = split /\r\n\r\n/, $text, 2;
    my ($status) = ($head // '') =~ m{^HTTP/1\.\d (\d+)};
    return { status => $status // 599, head => $head // '',
             content => $content, json => json_decode($content // '') };
}

# A connection from a chosen local port.  The port may still be taken by
# an earlier connection of the test (open, or in TIME_WAIT on our side):
# then another port known to reach the same worker serves instead.
sub connect_from {
    my ($self, $lport) = @_;
    my $pid = $self->{port_pid}{$lport};
    my @try = ($lport, defined $pid
        ? grep { $_ != $lport && $self->{port_pid}{$_} == $pid }
               sort { $a <=> $b } keys %{$self->{port_pid}}
        : ());
    for my $p (@try) {
        my $s = IO::Socket::INET->new(
            PeerAddr => '127.0.0.1', PeerPort => $self->{port},
            LocalAddr => '127.0.0.1', LocalPort => $p, ReuseAddr => 1,
            Timeout => 5);
        return $s if $s;
    }
    return undef;
}

# local ports whose connections land on the worker "pid"; below the
# kernel's ephemeral range, so no other connection picks them; a few more
# than asked for are remembered, for connect_from
sub ports_to {
    my ($self, $pid, $count) = @_;
    my @ports;
    my $found = 0;
    for my $lport (21000 .. 23000) {
        next if exists $self->{port_pid}{$lport};
        my $s = IO::Socket::INET->new(
            PeerAddr => '127.0.0.1', PeerPort => $self->{port},
            LocalAddr => '127.0.0.1', LocalPort => $lport, ReuseAddr => 1,
            Timeout => 5) or next;
        print $s "GET /t/state HTTP/1.0\r\n\r\n";
        local $/;
        my $text = <$s> // '';
        close $s;
        my ($json) = $text =~ /\r\n\r\n(.*)/s;
        my $r = json_decode($json // '') or next;
        $self->{port_pid}{$lport} = $r->{pid};
        next unless $r->{pid} == $pid;
        push @ports, $lport if @ports < $count;
        last if ++$found >= $count * 3;
    }
    return @ports;
}

sub get { my $self = shift; $self->http('GET', @_) }
sub post { my $self = shift; $self->http('POST', @_) }

# asks each worker itself, bypassing the module: {pid => prof_active}
sub states_by_worker {
    my ($self) = @_;
    my %want = map { $_ => 1 } $self->worker_pids;
    my %seen;
    for (1 .. 400) {
        my $r = $self->get('/t/state');
        next unless $r->{json};
        $seen{$r->{json}{pid}} = $r->{json}{prof_active} ? 1 : 0;
        last if !grep { !exists $seen{$_} } keys %want;
    }
    return \%seen;
}

sub log_text {
    my ($self, $name) = @_;
    open my $fh, '<', "$self->{prefix}/logs/" . ($name // 'error.log')
        or return '';
    local $/;
    return <$fh> // '';
}

# the lines at or above "level" that do not match the expected patterns
sub log_lines {
    my ($self, $re) = @_;
    return grep { /$re/ } split /\n/, $self->log_text;
}

sub no_alerts {
    my ($self, @expected) = @_;
    my @bad = grep {
        my $l = $_;
        !grep { $l =~ $_ } @expected
    } $self->log_lines(qr/\[(alert|crit|emerg)\]/);
    is(join("\n", @bad), '', 'no alert, crit or emerg in error.log');
}

sub curl {
    my ($self, $cmd) = @_;
    my $out = `$cmd 2>&1`;
    return $out;
}

1;
