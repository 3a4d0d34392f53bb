#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# A dump or a snapshot that does not fit on the disk is never named nor
# reported written.  jemalloc takes only a write() of -1 for an error, so
# a short last write once passed: prof_dump answered 200 for a dump cut
# mid-line.  malloc_dump_dir is a 1 MiB tmpfs here, filled but for a few
# KiB, less than one worker's dump.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use File::Copy qw(copy);
use File::Temp qw(tempdir);
use Test::More;
use MallocTest qw(poll_until);

my $tmp = tempdir(CLEANUP => 1);

$ENV{HOME} = '/tmp';

plan skip_all => 'mounting a tmpfs needs root' if $> != 0;

# what END unmounts (and the nginx to stop first), even after a failure
my (@mounts, @servers);

END {
    local $?;
    $_->stop for @servers;
    system('umount', $_) for reverse @mounts;
}

# a signal ends the test through END too, not around it
$SIG{$_} = sub { exit 1 } for qw(HUP INT PIPE TERM);

# an nginx whose dump directory is a fresh 1 MiB tmpfs
sub server {
    my (%opt) = @_;
    my $t = MallocTest->new(workers => 2, %opt);
    my $dir = $t->dump_dir;
    mkdir $dir or die "$dir: $!";
    if (system("mount -t tmpfs -o size=1m tmpfs $dir 2>/dev/null") != 0) {
        plan skip_all => "cannot mount a tmpfs on $dir";
    }
    push @mounts, $dir;
    push @servers, $t;
    return $t->start;
}

# blocks free for the workers (tmpfs keeps none for root), of 4 KiB
sub free_blocks {
    my ($dir) = @_;
    my $out = `stat -f -c %a $dir`;
    chomp $out;
    return $out;
}

# fills the file system, then gives back $leave bytes.  A dump being
# written or read while the filler grows (the export's, every second)
# would give its room back when it is removed: the filler is topped up
# until no other file is there and no more than $leave bytes are free.
sub fill {
    my ($dir, $leave) = @_;
    my $chunk = 'x' x 65536;
    for (1 .. 100) {
        open my $fh, '>>', "$dir/filler" or die "$dir/filler: $!";
        while (1) {
            my $n = syswrite($fh, $chunk);
            last if !defined $n || $n < length $chunk;
        }
        truncate($fh, (-s "$dir/filler") - $leave) or die "truncate: $!";
        close $fh;
        return if !names($dir) && free_blocks($dir) * 4096 <= $leave;
        select(undef, undef, undef, 0.1);
    }
    die "$dir: not filled, other files keep coming and going";
}

# the names in the directory but the filler's: dumps and hidden files
sub names {
    my ($dir) = @_;
    opendir my $d, $dir or die "$dir: $!";
    my @names = sort grep { !/^\.\.?$/ && $_ ne 'filler' } readdir $d;
    return @names;
}

# POST prof_dump on a full disk: a clear error, nothing named

my $t = server();
my $dir = $t->dump_dir;

$t->post('/malloc/prof_active', 'true');
$t->get('/t/alloc?mb=8') for 1 .. 4;

fill($dir, 8192);
is(free_blocks($dir), 2, 'two blocks left on the disk');

my $r = $t->post('/malloc/prof_dump', '"full.heap"');
is($r->{status}, 507, 'prof_dump on a full disk: 507');
is($r->{json}{error}{code}, 'no_space', 'code no_space');
like($r->{json}{error}{text}, qr/no space left on the device/,
     'the text says why') or diag explain $r->{json};
ok(!grep({ !$_->{error} } @{$r->{json}{workers} // []}),
   'no worker reports a dump written');
ok(!grep({ exists $_->{bytes} } @{$r->{json}{workers} // []}),
   'nor any bytes');
is(join(' ', names($dir)), '', 'no file named, none hidden left');

# a profile needs dumps too: the same error

$r = $t->get('/malloc/pprof/heap');
is($r->{status}, 507, 'a profile on a full disk: 507');
is(join(' ', names($dir)), '', 'no profile dump left');

like($t->log_text,
     qr/\[error\].*heap dump to ".*full\.\d+\.heap" failed: no space left/,
     'each worker logs its failure');

# no room at all: what the workers write for a read (GET traffic,
# stats?detail=full) is refused or left out, and never left behind

open my $more, '>>', "$dir/filler" or die $!;
1 while (syswrite($more, 'x' x 4096) // 0) == 4096;
close $more;

$r = $t->get('/malloc/traffic');
is($r->{status}, 507, 'traffic on a full disk: 507');
is($r->{json}{error}{code}, 'no_space', 'traffic: code no_space');
is(join(' ', names($dir)), '', 'traffic: no file left');

$r = $t->get('/malloc/stats?detail=full');
is($r->{status}, 200, 'stats?detail=full on a full disk: the figures');
is(join(' ', names($dir)), '', 'stats: no report left');

# room again: the same dump is whole, and jeprof reads it

unlink "$dir/filler";
$r = $t->post('/malloc/prof_dump', '"full.heap"');
is($r->{status}, 200, 'with room, the same dump succeeds');
my @paths = map { $_->{path} } @{$r->{json}{workers} // []};
is(scalar @paths, 2, 'two dumps');
for my $w (@{$r->{json}{workers} // []}) {
    is($w->{bytes}, -s $w->{path}, "worker $w->{worker}: bytes are the size");
    ok($w->{bytes} > 8192, "worker $w->{worker}: larger than the room "
       . 'that was left');
    open my $fh, '<', $w->{path} or die;
    local $/;
    my $text = <$fh>;
    like($text, qr/\nMAPPED_LIBRARIES:\n.*\n\z/s,
         "worker $w->{worker}: the dump ends with its maps");
}
my $jeprof = `jeprof --text $MallocTest::NGINX @paths 2>/dev/null`;
like($jeprof, qr/^Total: [\d.]+ MB/m, 'jeprof totals the dumps');
like($jeprof, qr/ngx_http_malloc_test_hold/, 'and names the allocator');

$t->no_alerts;
$t->stop;

# scheduled snapshots, in both formats: none while the disk is full

for my $format ('heap', 'pprof') {
    $t = server(http => "malloc_snapshot interval=1s keep=4 "
                . "format=$format max_size=0;");
    $dir = $t->dump_dir;

    fill($dir, 8192);

    $t->post('/malloc/prof_active', 'true');
    $t->get('/t/alloc?mb=8') for 1 .. 4;

    # the listing and the directory, watched until two snapshots failed
    my (%listed, %seen);
    ok(poll_until(20, sub {
        $listed{$_->{name}}++
            for @{$t->get('/malloc/snapshots')->{json}{snapshots} // []};
        $seen{$_}++ for grep { /^snapshot-/ } names($dir);
        my @failed = $t->log_text
            =~ /\[error\].* heap dump to "[^"]*" failed: no space/g;
        @failed >= 4;
    }), "$format: the snapshots fail on a full disk")
        or diag join "\n", $t->log_lines(qr/\[(error|warn)\]/);

    is(join(' ', sort keys %seen), '', "$format: no snapshot file appears");
    is(join(' ', sort keys %listed), '', "$format: none listed");
    like($t->log_text, qr/\[error\].* heap snapshot \S+ failed: .*retrying/,
         "$format: the failed snapshot logged");

    # room again: the next snapshot is whole and reads

    unlink "$dir/filler";

    my $list;
    ok(poll_until(15, sub {
        $list = $t->get('/malloc/snapshots')->{json}{snapshots};
        $list && @$list && $t->log_text =~ /heap snapshot \S+ written again/;
    }), "$format: written again once there is room");

    my $name = $list->[0]{name} // '';
    my $path = "$dir/$name";
    is($list->[0]{bytes}, -s $path, "$format: listed with its size");

    # copies for the tools: with keep=4 and a snapshot a second, the file
    # is pruned while a first go tool pprof in a fresh system compiles.
    # A heap snapshot is a file per worker, and jeprof prints no total
    # for a worker that holds no sample: the snapshot is all of them.
    my @copies;
    for my $s (grep { $_->{time} eq $list->[0]{time} } @$list) {
        copy("$dir/$s->{name}", "$tmp/$s->{name}")
            or die "$s->{name}: $!";
        push @copies, "$tmp/$s->{name}";
    }
    $path = $copies[0];

    if ($format eq 'heap') {
        like(`jeprof --text $MallocTest::NGINX @copies 2>/dev/null`,
             qr/^Total: [\d.]+ MB/m, "$format: jeprof reads the snapshot");
    } else {
        like(`cd / && go tool pprof -top $path 2>&1`,
             qr/ngx_http_malloc_test_hold/,
             "$format: go tool pprof reads the snapshot");
    }

    $t->no_alerts;
    $t->stop;
}

# malloc_export on a full disk: the interval's profile is dropped, with
# why, no dump is left, and with room again the export goes on (to a
# collector that is not there: the next failure is the connection's)

{
    my $port = MallocTest::free_port();
    my $t = server(http => "malloc_export http://127.0.0.1:$port "
                           . 'interval=1s timeout=1s;');
    my $dir = $t->dump_dir;
    my $state = sub { $t->get('/malloc/')->{json}{export} // {} };

    $t->post('/malloc/prof_active', 'true');
    $t->get('/t/alloc?mb=8') for 1 .. 4;
    fill($dir, 8192);

    ok(poll_until(10, sub {
        ($state->()->{last_error}{reason} // '') =~ /no worker could dump/;
    }), 'export on a full disk: last_error says no worker could dump')
        or diag explain $state->();
    ok(($state->()->{dropped} // 0) >= 1, 'and the profile is dropped');
    is(join(' ', names($dir)), '', 'export: no dump left on the disk');

    unlink "$dir/filler";
    ok(poll_until(10, sub {
        ($state->()->{last_error}{reason} // '') =~ /connect/;
    }), 'with room again the export goes on, to the next failure')
        or diag explain $state->();
    is(join(' ', names($dir)), '', 'export: still no dump left');

    $t->stop;
    $t->no_alerts;
}

done_testing;
